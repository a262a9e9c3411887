// Bucket bounds of the in-kernel log2 histograms (see reclaim_stall.h): slot i counts
// durations d with 2^i <= d < 2^(i+1) nanoseconds (slot 0 also d == 0), the last slot
// everything from 2^(kSlots-1) ns (~550 s) up. Pure functions, so an exporter can turn slots
// into Prometheus `le` buckets without knowing anything about BPF.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace memdiag::log2_histogram {

// Must equal MEMDIAG_STALL_SLOTS; reclaim_stall_probe.cpp asserts it.
inline constexpr std::size_t kSlots = 40;

using Slots = std::array<std::uint64_t, kSlots>;

// Exclusive upper bound of slot `slot` in nanoseconds: 2^(slot+1). Every duration counted in
// the slot is below it, every duration in the next slot at or above it. The last slot is
// open-ended: UINT64_MAX (as are slots past the end).
constexpr std::uint64_t upper_bound_ns(std::size_t slot, std::size_t slots = kSlots) {
  if (slot + 1 >= slots || slot + 1 >= 64) return std::numeric_limits<std::uint64_t>::max();
  return std::uint64_t{1} << (slot + 1);
}

// The same in seconds, as the Prometheus `le` of the bucket ending with this slot; the last
// slot gives +Inf. `le` is inclusive while the slot is half-open, so a duration of exactly
// 2^(slot+1) ns is counted one bucket higher: a 1 ns quantisation, far below anything a
// reclaim stall can resolve, for bounds that stay round powers of two.
constexpr double upper_bound_seconds(std::size_t slot, std::size_t slots = kSlots) {
  if (slot + 1 >= slots || slot + 1 >= 64) return std::numeric_limits<double>::infinity();
  return static_cast<double>(upper_bound_ns(slot, slots)) / 1e9;
}

// Running sums: element i = durations below upper_bound_ns(i); the last = the total count.
constexpr Slots cumulative(const Slots& per_slot) {
  Slots out{};
  std::uint64_t running = 0;
  for (std::size_t i = 0; i < kSlots; ++i) {
    running += per_slot[i];
    out[i] = running;
  }
  return out;
}

}  // namespace memdiag::log2_histogram
