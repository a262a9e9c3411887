// SPDX-License-Identifier: Apache-2.0
// The daemon's process_* self-figures: /proc/self/stat and /proc/stat's btime parsed, and the
// reader against this very process.
#include "daemon/process_self.hpp"

#include <gtest/gtest.h>
#include <time.h>
#include <unistd.h>

#include <string>

namespace memdiag {
namespace {

// A real line of /proc/self/stat (Linux 6.18) with a comm holding a space and a ')'.
constexpr std::string_view kStat =
    "4242 (memdiag) x) S 1 4242 4242 0 -1 4194560 1523 0 0 0 250 75 0 0 20 0 5 0 123400 "
    "62914560 1700 18446744073709551615 1 1 0 0 0 0 0 4096 17408 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n";

TEST(ProcessSelf, ParsesCpuMemoryAndStartTime) {
  auto self = parse_self_stat(kStat, 100, 4096, 1'700'000'000);
  ASSERT_TRUE(self) << self.error().message;
  EXPECT_DOUBLE_EQ(self->cpu_seconds, 3.25);                     // (250 + 75) ticks at 100 Hz
  EXPECT_EQ(self->virtual_bytes, 62914560u);
  EXPECT_EQ(self->resident_bytes, 1700u * 4096);
  EXPECT_DOUBLE_EQ(self->start_time_seconds, 1'700'000'000 + 1234.0);  // boot + 123400 ticks
}

TEST(ProcessSelf, RefusesGarbage) {
  EXPECT_FALSE(parse_self_stat("", 100, 4096, 0));
  EXPECT_FALSE(parse_self_stat("4242 (x) S 1 2 3", 100, 4096, 0));           // cut short
  EXPECT_FALSE(parse_self_stat(std::string(kStat).replace(60, 3, "abc"), 100, 4096, 0));
  EXPECT_FALSE(parse_self_stat(kStat, 0, 4096, 0));                          // no clock tick
  EXPECT_FALSE(parse_self_stat("no parenthesis at all", 100, 4096, 0));
}

TEST(ProcessSelf, BootTime) {
  EXPECT_EQ(*parse_boot_time("cpu  1 2 3\nintr 5\nbtime 1764900000\nprocesses 9\n"), 1764900000u);
  EXPECT_FALSE(parse_boot_time("cpu 1 2 3\n"));
  EXPECT_FALSE(parse_boot_time("btime soon\n"));
  EXPECT_FALSE(parse_boot_time(""));
}

// Against this process: it started before now and after boot, holds memory and descriptors.
TEST(ProcessSelf, ReadsThisProcess) {
  ProcessSelfReader reader;
  auto self = reader.read();
  ASSERT_TRUE(self.has_value());
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  EXPECT_LE(self->start_time_seconds, static_cast<double>(now.tv_sec) + 1);
  EXPECT_GT(self->start_time_seconds, static_cast<double>(now.tv_sec) - 24 * 3600);
  EXPECT_GT(self->resident_bytes, 1u << 20);
  EXPECT_GE(self->virtual_bytes, self->resident_bytes);
  ASSERT_TRUE(self->open_fds.has_value());
  EXPECT_GE(*self->open_fds, 3u);  // stdin, stdout, stderr
  ASSERT_TRUE(self->max_fds.has_value());
  EXPECT_GE(*self->max_fds, *self->open_fds);
  // CPU time only grows.
  volatile double spin = 0;
  for (int i = 0; i < 50'000'000; ++i) spin = spin + i;
  EXPECT_GT(reader.read()->cpu_seconds, self->cpu_seconds);
}

}  // namespace
}  // namespace memdiag
