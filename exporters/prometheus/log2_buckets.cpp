// SPDX-License-Identifier: Apache-2.0
#include "exporters/prometheus/log2_buckets.hpp"

namespace memdiag::prom {
namespace {

// Bucket b ends with slot 9 + 2b, so its bound is that slot's upper bound (log2_layout.h).
constexpr std::size_t kFirstSlot = 9;
constexpr std::size_t kSlotStep = 2;
static_assert(kFirstSlot + kSlotStep * (kLog2Buckets - 1) < kLog2Slots - 1, "the last slot is open-ended");

const std::array<double, kLog2Buckets>& bounds() {
  static const auto table = [] {
    std::array<double, kLog2Buckets> b{};
    for (std::size_t i = 0; i < kLog2Buckets; ++i) b[i] = log2_bucket_bound_seconds(i);
    return b;
  }();
  return table;
}

}  // namespace

double log2_bucket_bound_seconds(std::size_t bucket) {
  return log2_upper_bound_seconds(kFirstSlot + kSlotStep * bucket);
}

HistogramView log2_histogram_view(const Log2Distribution& d, Log2Cumulative& cumulative) {
  std::uint64_t running = 0;
  std::size_t slot = 0;
  for (std::size_t b = 0; b < kLog2Buckets; ++b) {
    for (const std::size_t last = kFirstSlot + kSlotStep * b; slot <= last; ++slot) running += d.slots[slot];
    cumulative[b] = running;
  }
  // The kernel bumps a slot before the count: a read racing an event can see the slots one
  // ahead. +Inf is the total of the slots, so buckets never exceed it.
  std::uint64_t total = running;
  for (; slot < kLog2Slots; ++slot) total += d.slots[slot];
  return HistogramView{bounds().data(), cumulative.data(), kLog2Buckets, total, static_cast<double>(d.sum_ns) / 1e9};
}

}  // namespace memdiag::prom

namespace memdiag::prom {
namespace {

// Indices into the full buckets: 2^16, 2^20, 2^24, 2^28 and 2^32 ns.
constexpr std::array<std::size_t, kCoarseLog2Buckets> kCoarseOf = {3, 5, 7, 9, 11};

const std::array<double, kCoarseLog2Buckets>& coarse_bounds() {
  static const std::array<double, kCoarseLog2Buckets> b = [] {
    std::array<double, kCoarseLog2Buckets> out{};
    for (std::size_t i = 0; i < kCoarseLog2Buckets; ++i) out[i] = log2_bucket_bound_seconds(kCoarseOf[i]);
    return out;
  }();
  return b;
}

}  // namespace

HistogramView coarse_log2_histogram_view(const Log2Distribution& d, Log2Cumulative& cumulative) {
  const HistogramView full = log2_histogram_view(d, cumulative);
  // In place: coarse bucket i takes full bucket kCoarseOf[i] >= i, so nothing is read after it
  // was overwritten.
  for (std::size_t i = 0; i < kCoarseLog2Buckets; ++i) cumulative[i] = cumulative[kCoarseOf[i]];
  return HistogramView{coarse_bounds().data(), cumulative.data(), kCoarseLog2Buckets, full.count, full.sum};
}

}  // namespace memdiag::prom
