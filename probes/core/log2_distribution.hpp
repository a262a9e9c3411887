// SPDX-License-Identifier: Apache-2.0
// A latency distribution as log2 slots of nanoseconds (the layout of probes/core/log2_layout.h:
// slot i counts durations of 2^i to 2^(i+1) ns, slot 0 also 0 ns, the last slot everything
// longer), with the count and the sum. The in-kernel eBPF histograms have the same layout, and
// every section that times something (reclaim stalls, the canary's page faults and cycles) uses
// it, so one exporter routine turns any of them into Prometheus buckets.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "probes/core/log2_layout.h"

namespace memdiag {

inline constexpr std::size_t kLog2Slots = MEMDIAG_LOG2_SLOTS;
using Log2Slots = std::array<std::uint64_t, kLog2Slots>;

// The slot a duration falls in: the kernel's own function (log2_layout.h).
constexpr std::size_t log2_slot(std::uint64_t ns) { return memdiag_log2_slot(ns); }

// Exclusive upper bound of `slot` in nanoseconds, 2^(slot+1); the last slot (and any past the
// end) is open-ended: UINT64_MAX.
constexpr std::uint64_t log2_upper_bound_ns(std::size_t slot) {
  return slot >= kLog2Slots ? std::numeric_limits<std::uint64_t>::max()
                            : memdiag_log2_upper_bound_ns(static_cast<unsigned int>(slot));
}

// The same in seconds, as the Prometheus `le` of a bucket ending with this slot; the last slot
// gives +Inf. `le` is inclusive while the slot is half-open, so a duration of exactly
// 2^(slot+1) ns is counted one bucket higher: a 1 ns quantisation, far below anything a stall
// or a page fault can resolve, for bounds that stay round powers of two.
constexpr double log2_upper_bound_seconds(std::size_t slot) {
  if (slot + 1 >= kLog2Slots) return std::numeric_limits<double>::infinity();
  return static_cast<double>(log2_upper_bound_ns(slot)) / 1e9;
}

struct Log2Distribution {
  Log2Slots slots{};  // per slot, not cumulative
  std::uint64_t count = 0;
  std::uint64_t sum_ns = 0;

  void record(std::uint64_t ns) {
    ++slots[log2_slot(ns)];
    ++count;
    sum_ns += ns;
  }
  void add(const Log2Distribution& other) {
    for (std::size_t i = 0; i < kLog2Slots; ++i) slots[i] += other.slots[i];
    count += other.count;
    sum_ns += other.sum_ns;
  }

  bool operator==(const Log2Distribution&) const = default;
};

}  // namespace memdiag
