// SPDX-License-Identifier: Apache-2.0
// Prometheus buckets for log2 latency distributions (probes/core/log2_distribution.hpp): the
// reclaim-stall histograms and the canary's. The 40 slots are exported with `le` bounds at
// every second power of two from 2^10 ns (~1 us) to 2^34 ns (~17 s): 13 buckets plus +Inf. A
// factor of 4 between buckets keeps a histogram at 16 series and quantiles within a factor of 2.
#pragma once

#include <array>
#include <cstdint>

#include "exporters/prometheus/metric_sink.hpp"
#include "probes/core/log2_distribution.hpp"

namespace memdiag::prom {

inline constexpr std::size_t kLog2Buckets = 13;
using Log2Cumulative = std::array<std::uint64_t, kLog2Buckets>;

double log2_bucket_bound_seconds(std::size_t bucket);

// The histogram sample of `d`; `cumulative` is scratch space the view points into.
HistogramView log2_histogram_view(const Log2Distribution& d, Log2Cumulative& cumulative);

// The same with every other bucket: `le` at ~65 us, ~1 ms, ~17 ms, ~270 ms and ~4.3 s, plus +Inf
// (8 series, quantiles within a factor of 4). For histograms exported per cgroup, where the
// question is whether a cgroup waits microseconds, milliseconds or seconds, not the exact tail:
// the node's histograms keep every bucket.
inline constexpr std::size_t kCoarseLog2Buckets = 5;
HistogramView coarse_log2_histogram_view(const Log2Distribution& d, Log2Cumulative& cumulative);

}  // namespace memdiag::prom
