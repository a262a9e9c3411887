// SPDX-License-Identifier: Apache-2.0
// /proc/meminfo parsing.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "probes/linux/node/meminfo_parser.hpp"

namespace memdiag {
namespace {

TEST(Meminfo, ParsesKilobytesAndCounts) {
  std::vector<MeminfoEntry> out;
  const std::string text =
      "MemTotal:       24683656 kB\n"
      "Active(anon):       1540 kB\n"
      "Committed_AS:    2000000 kB\n"
      "HugePages_Total:       4\n"
      "Hugepagesize:       2048 kB\n";
  ASSERT_TRUE(parse_meminfo(text, out));
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[0].name, "MemTotal");
  EXPECT_EQ(out[0].value, 24683656ull * 1024);
  EXPECT_TRUE(out[0].in_bytes);
  EXPECT_EQ(out[1].name, "Active(anon)");
  EXPECT_EQ(out[3].name, "HugePages_Total");
  EXPECT_EQ(out[3].value, 4u);
  EXPECT_FALSE(out[3].in_bytes);
}

TEST(Meminfo, UnknownFieldsOfNewKernelsAreKept) {
  std::vector<MeminfoEntry> out;
  ASSERT_TRUE(parse_meminfo("MemTotal: 1 kB\nSomethingNew2030:  7 kB\n", out));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].name, "SomethingNew2030");
  EXPECT_EQ(out[1].value, 7u * 1024);
}

TEST(Meminfo, RefusesBrokenInput) {
  std::vector<MeminfoEntry> out;
  EXPECT_FALSE(parse_meminfo("", out));
  EXPECT_FALSE(parse_meminfo("\n\n", out));
  EXPECT_FALSE(parse_meminfo("MemTot\n", out));                    // truncated before the colon
  EXPECT_FALSE(parse_meminfo("MemTotal:\n", out));                 // truncated before the value
  EXPECT_FALSE(parse_meminfo("MemTotal:  12 MB\n", out));        // unit we do not know
  EXPECT_FALSE(parse_meminfo("MemTotal:  12 kB extra\n", out));  // trailing text
  EXPECT_FALSE(parse_meminfo("Mem Total:  12 kB\n", out));       // space in name
  EXPECT_FALSE(parse_meminfo("\x01\x02\xff garbage\n", out));
  EXPECT_FALSE(parse_meminfo(":12 kB\n", out));
  EXPECT_FALSE(parse_meminfo("((: 1 kB\n", out));
  EXPECT_FALSE(parse_meminfo("Active(anon: 1 kB\n", out));
  EXPECT_FALSE(parse_meminfo("Active(an)on): 1 kB\n", out));
  EXPECT_FALSE(parse_meminfo("MemTotal:       8000000 kB", out));  // cut before the newline
  EXPECT_FALSE(parse_meminfo("MemTotal: 18446744073709551616 kB\n", out));  // > 2^64
  EXPECT_FALSE(parse_meminfo("MemTotal: 18014398509481984 kB\n", out));     // 2^54 kB overflows bytes
}

TEST(Meminfo, DuplicateFieldIsAnErrorNamingTheLine) {
  std::vector<MeminfoEntry> out;
  auto st = parse_meminfo("MemTotal: 1 kB\nMemFree: 2 kB\nMemTotal: 3 kB\n", out);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("line 3"), std::string::npos) << st.error().message;
  EXPECT_NE(st.error().message.find("duplicate"), std::string::npos);
}

TEST(Meminfo, HugeInputWithTooManyFieldsIsRefused) {
  std::string text;
  for (int i = 0; i < 600; ++i) text += "Field" + std::to_string(i) + ": 1 kB\n";
  std::vector<MeminfoEntry> out;
  auto st = parse_meminfo(text, out);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("more fields"), std::string::npos);
}

TEST(Meminfo, ErrorExcerptIsPrintableAndShort) {
  std::vector<MeminfoEntry> out;
  auto st = parse_meminfo(std::string("Mem\x01\x02Total: 1 kB ") + std::string(500, 'x') + "\n", out);
  ASSERT_FALSE(st);
  for (char c : st.error().message) EXPECT_TRUE(c >= 0x20 && c < 0x7f);
  EXPECT_LT(st.error().message.size(), 200u);
}

}  // namespace
}  // namespace memdiag
