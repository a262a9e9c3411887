// SPDX-License-Identifier: Apache-2.0
// memdiag_reclaim_stall_* and memdiag_oom_victims_* series from the eBPF source's section:
// Prometheus histograms of how long tasks waited in reclaim, compaction and throttling, per
// kind for the node and per kind and memory cgroup (the most stalled ones, within the cap).
#pragma once

#include "exporters/prometheus/metric_sink.hpp"
#include "probes/core/reclaim_stall_section.hpp"

namespace memdiag::prom {

void render_reclaim_stall(const ReclaimStallSection& section, MetricSink& sink);

}  // namespace memdiag::prom
