// SPDX-License-Identifier: Apache-2.0
// PSI file parsing (/proc/pressure/* and cgroup2 *.pressure).
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "probes/linux/node/pressure_parser.hpp"

namespace memdiag {
namespace {

TEST(Pressure, BothLines) {
  auto psi = parse_pressure(
      "some avg10=1.61 avg60=5.27 avg300=5.22 total=27140957\n"
      "full avg10=0.50 avg60=0.00 avg300=100.00 total=12\n");
  ASSERT_TRUE(psi) << psi.error().message;
  EXPECT_DOUBLE_EQ(psi->some.avg10, 0.0161);
  EXPECT_DOUBLE_EQ(psi->some.avg60, 0.0527);
  EXPECT_EQ(psi->some.total_us, 27140957u);
  ASSERT_TRUE(psi->full.has_value());
  EXPECT_DOUBLE_EQ(psi->full->avg300, 1.0);
  EXPECT_EQ(psi->full->total_us, 12u);
}

TEST(Pressure, UnknownKeysOfLaterKernelsAreIgnored) {
  auto psi = parse_pressure("some avg10=1.00 avg60=0.00 avg300=0.00 total=5 avg1=3.00\n");
  ASSERT_TRUE(psi) << psi.error().message;
  EXPECT_DOUBLE_EQ(psi->some.avg10, 0.01);
}

TEST(Pressure, CpuWithoutFullLineBefore513) {
  auto psi = parse_pressure("some avg10=45.00 avg60=40.00 avg300=30.00 total=99887766\n");
  ASSERT_TRUE(psi);
  EXPECT_FALSE(psi->full.has_value());
  EXPECT_DOUBLE_EQ(psi->some.avg10, 0.45);
}

TEST(Pressure, RefusesBrokenInput) {
  EXPECT_FALSE(parse_pressure(""));
  EXPECT_FALSE(parse_pressure("full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"));  // no some
  EXPECT_FALSE(parse_pressure("some avg10=0.00 avg60=0.00 avg300=0.00\n"));          // truncated
  EXPECT_FALSE(parse_pressure("some avg10=0.00 avg60=0.00 avg300=0.00 tot\n"));
  EXPECT_FALSE(parse_pressure("some avg10=abc avg60=0.00 avg300=0.00 total=0\n"));
  EXPECT_FALSE(parse_pressure("some avg10=100.01 avg60=0.00 avg300=0.00 total=0\n"));
  EXPECT_FALSE(parse_pressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=18446744073709551616\n"));
  EXPECT_FALSE(parse_pressure("some avg10=0.00 avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"));
  EXPECT_FALSE(parse_pressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=0"));  // no newline
  EXPECT_FALSE(parse_pressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=0 =1\n"));
  EXPECT_FALSE(parse_pressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
                              "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"));
  EXPECT_FALSE(parse_pressure("most avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"));
}


}  // namespace
}  // namespace memdiag
