// SPDX-License-Identifier: Apache-2.0
// The diagnosis beyond the node's stall level: each cgroup scope's stall level, the
// roles and contribution of members in stalling scopes, relief, shortfall and the forecast.
#pragma once

#include "exporters/prometheus/metric_sink.hpp"
#include "probes/core/snapshot.hpp"

namespace memdiag::prom {

void render_pressure_scopes(const Snapshot& snapshot, MetricSink& sink);

}  // namespace memdiag::prom
