// memdiag_reclaim_stall_* and memdiag_oom_victims_* series from the eBPF source's section:
// Prometheus histograms of how long tasks waited in reclaim, compaction and throttling, per
// kind for the node and per kind and memory cgroup (the most stalled ones, within the cap).
#pragma once

#include "exporters/prometheus/metric_sink.hpp"
#include "probes/core/reclaim_stall_section.hpp"

namespace memdiag::prom {

void render_reclaim_stall(const ReclaimStallSection& section, MetricSink& sink);

// The `le` bounds the kernel's 40 log2 slots are exported with: every second power of two from
// 2^10 ns (~1 us) to 2^34 ns (~17 s), 13 buckets plus +Inf. A factor of 4 between buckets keeps
// a histogram at 16 series per cgroup and kind, and quantiles within a factor of 2.
inline constexpr std::size_t kStallBuckets = 13;
double stall_bucket_bound_seconds(std::size_t bucket);

}  // namespace memdiag::prom
