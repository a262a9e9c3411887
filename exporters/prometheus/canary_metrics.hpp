// SPDX-License-Identifier: Apache-2.0
// memdiag_canary_* and memdiag_allocator_* series from the canary source's section:
// page-fault and cycle latency histograms of the daemon's canary and of each cgroup canary, their
// counters, and the canary allocator's accounting.
#pragma once

#include "exporters/prometheus/metric_sink.hpp"
#include "probes/core/canary_section.hpp"

namespace memdiag::prom {

void render_canary(const CanarySection& section, MetricSink& sink);

}  // namespace memdiag::prom
