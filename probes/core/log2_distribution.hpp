// A latency distribution as log2 slots of nanoseconds: slot i counts durations of 2^i to
// 2^(i+1) ns (slot 0 also 0 ns, the last slot everything longer), with the count and the sum.
// The layout of the in-kernel eBPF histograms (probes/bpf/log2_histogram.hpp), shared by every
// section that times something (reclaim stalls, the canary's page faults and cycles), so one
// exporter routine turns any of them into Prometheus buckets.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace memdiag {

inline constexpr std::size_t kLog2Slots = 40;
using Log2Slots = std::array<std::uint64_t, kLog2Slots>;

struct Log2Distribution {
  Log2Slots slots{};  // per slot, not cumulative
  std::uint64_t count = 0;
  std::uint64_t sum_ns = 0;

  void record(std::uint64_t ns) {
    const std::size_t slot = ns == 0 ? 0 : static_cast<std::size_t>(std::bit_width(ns) - 1);
    ++slots[slot < kLog2Slots ? slot : kLog2Slots - 1];
    ++count;
    sum_ns += ns;
  }
  void add(const Log2Distribution& other) {
    for (std::size_t i = 0; i < kLog2Slots; ++i) slots[i] += other.slots[i];
    count += other.count;
    sum_ns += other.sum_ns;
  }
};

}  // namespace memdiag
