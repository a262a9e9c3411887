// SPDX-License-Identifier: Apache-2.0
// /proc/vmstat parsing.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "probes/linux/node/vmstat_parser.hpp"

namespace memdiag {
namespace {

TEST(Vmstat, ParsesFieldsInOrder) {
  std::vector<VmstatEntry> out;
  ASSERT_TRUE(parse_vmstat("nr_free_pages 1107300\npgscan_direct 12\nallocstall_normal 3\n", out));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[1].name, "pgscan_direct");
  EXPECT_EQ(out[1].value, 12u);
}

TEST(Vmstat, MissingFinalNewlineIsTruncation) {
  // "oom_kill 2345" cut to "oom_kill 2" must not be reported as 2.
  std::vector<VmstatEntry> out;
  auto st = parse_vmstat("nr_free_pages 1\noom_kill 2", out);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("truncated"), std::string::npos);
}

TEST(Vmstat, RefusesBrokenInput) {
  std::vector<VmstatEntry> out;
  EXPECT_FALSE(parse_vmstat("", out));
  EXPECT_FALSE(parse_vmstat("nr_free_pages 1\npgscan_kswa", out));    // truncated mid-line
  EXPECT_FALSE(parse_vmstat("nr_free_pages 1\npgscan_kswa\n", out));  // a name without a value
  EXPECT_FALSE(parse_vmstat("nr_free_pages\n", out));
  EXPECT_FALSE(parse_vmstat("nr_free_pages 1 2\n", out));
  EXPECT_FALSE(parse_vmstat("nr_free_pages -1\n", out));
  EXPECT_FALSE(parse_vmstat("nr_free_pages 99999999999999999999\n", out));
  EXPECT_FALSE(parse_vmstat("nr-free 1\n", out));
  EXPECT_FALSE(parse_vmstat("oom_kill 1\noom_kill 2\n", out));
}

TEST(Vmstat, CountersAndLevels) {
  EXPECT_TRUE(vmstat_field_is_counter("pgscan_direct"));
  EXPECT_TRUE(vmstat_field_is_counter("allocstall_normal"));
  EXPECT_TRUE(vmstat_field_is_counter("workingset_refault_file"));
  EXPECT_TRUE(vmstat_field_is_counter("oom_kill"));
  EXPECT_TRUE(vmstat_field_is_counter("nr_dirtied"));   // cumulative despite nr_
  EXPECT_TRUE(vmstat_field_is_counter("nr_vmscan_write"));
  EXPECT_FALSE(vmstat_field_is_counter("nr_free_pages"));
  EXPECT_FALSE(vmstat_field_is_counter("nr_dirty_threshold"));
  EXPECT_FALSE(vmstat_field_is_counter("workingset_nodes"));
}

}  // namespace
}  // namespace memdiag
