// SPDX-License-Identifier: Apache-2.0
// memdiag_process_* and memdiag_map_areas_* series from the process source's section:
// the selected processes' map counts and memory, the processes above the map-count threshold,
// the node's highest ratio, the ratio histogram and per-cgroup sums.
#pragma once

#include "exporters/prometheus/metric_sink.hpp"
#include "probes/core/process_section.hpp"

namespace memdiag::prom {

void render_processes(const ProcessSection& section, MetricSink& sink);

}  // namespace memdiag::prom
