// SPDX-License-Identifier: Apache-2.0
// The one log2 layout (probes/core/log2_layout.h): the slot function the BPF programs run, the
// bounds the exporter publishes, and Log2Distribution recording with the very same function.
// Pure: runs in every build, with or without eBPF.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "probes/core/log2_distribution.hpp"
#include "probes/core/log2_layout.h"

namespace memdiag {
namespace {

// constexpr in C++: the layout can be checked at compile time.
static_assert(memdiag_log2_slot(0) == 0);
static_assert(memdiag_log2_slot(1023) == 9 && memdiag_log2_slot(1024) == 10);
static_assert(memdiag_log2_upper_bound_ns(9) == 1024);
static_assert(kLog2Slots == MEMDIAG_LOG2_SLOTS);

TEST(Log2Layout, UpperBoundsArePowersOfTwoNanoseconds) {
  EXPECT_EQ(log2_upper_bound_ns(0), 2u);
  EXPECT_EQ(log2_upper_bound_ns(9), 1024u);
  EXPECT_EQ(log2_upper_bound_ns(38), 1ull << 39);  // ~550 s
  EXPECT_EQ(log2_upper_bound_ns(39), UINT64_MAX);  // last slot is open-ended
  EXPECT_EQ(log2_upper_bound_ns(1000), UINT64_MAX);
  EXPECT_EQ(memdiag_log2_upper_bound_ns(~0u), UINT64_MAX);  // no wrap-around past the end
  EXPECT_DOUBLE_EQ(log2_upper_bound_seconds(0), 2e-9);
  EXPECT_DOUBLE_EQ(log2_upper_bound_seconds(9), 1024e-9);
  EXPECT_DOUBLE_EQ(log2_upper_bound_seconds(19), 1048576e-9);  // ~1 ms
  EXPECT_DOUBLE_EQ(log2_upper_bound_seconds(38), std::ldexp(1.0, 39) / 1e9);
  EXPECT_TRUE(std::isinf(log2_upper_bound_seconds(39)));
  EXPECT_TRUE(std::isinf(log2_upper_bound_seconds(1000)));
  for (std::size_t i = 1; i + 1 < kLog2Slots; ++i) {
    EXPECT_DOUBLE_EQ(log2_upper_bound_seconds(i), 2 * log2_upper_bound_seconds(i - 1)) << i;
  }
}

// The kernel's slot function against the bounds user space publishes: every duration lies
// below its slot's bound and at or above the previous slot's.
std::vector<std::uint64_t> sample_durations() {
  std::vector<std::uint64_t> samples = {0, 1, 2, 3, 999, 1000, 1024, 123456789, 1ull << 39, (1ull << 40) + 7};
  for (std::size_t i = 0; i < 64; ++i) {
    samples.push_back(1ull << i);
    samples.push_back((1ull << i) - 1);
    samples.push_back((1ull << i) + 1);
  }
  samples.push_back(UINT64_MAX);
  return samples;
}

TEST(Log2Layout, SlotFunctionMatchesBounds) {
  EXPECT_EQ(memdiag_log2_slot(0), 0u);
  EXPECT_EQ(memdiag_log2_slot(1), 0u);
  EXPECT_EQ(memdiag_log2_slot(UINT64_MAX), kLog2Slots - 1);
  for (std::uint64_t ns : sample_durations()) {
    const std::size_t slot = memdiag_log2_slot(ns);
    ASSERT_LT(slot, kLog2Slots);
    if (slot + 1 < kLog2Slots) {
      EXPECT_LT(ns, log2_upper_bound_ns(slot)) << ns;
    }
    if (slot > 0) {
      EXPECT_GE(ns, log2_upper_bound_ns(slot - 1)) << ns;
    }
  }
  for (std::size_t i = 0; i + 1 < kLog2Slots; ++i) {
    EXPECT_EQ(memdiag_log2_slot(1ull << i), i);
    EXPECT_EQ(memdiag_log2_slot((2ull << i) - 1), i);
  }
}

// What the canary records lands where the kernel would have put it.
TEST(Log2Layout, DistributionRecordsInTheKernelsSlot) {
  for (std::uint64_t ns : sample_durations()) {
    Log2Distribution d;
    d.record(ns);
    EXPECT_EQ(d.slots[memdiag_log2_slot(ns)], 1u) << ns;
    EXPECT_EQ(d.count, 1u);
    EXPECT_EQ(d.sum_ns, ns);
  }
}

}  // namespace
}  // namespace memdiag
