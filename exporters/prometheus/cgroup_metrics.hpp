// SPDX-License-Identifier: Apache-2.0
// memdiag_cgroup_* series from a snapshot's cgroup section. Every series carries the cgroup
// path and, where the path says so, pod_uid, qos_class, container_id or unit. Unlimited limits
// are absent, never 2^63.
#pragma once

#include <optional>

#include "exporters/prometheus/metric_sink.hpp"
#include "probes/core/snapshot.hpp"

namespace memdiag::prom {

// `derived`: the same snapshot's derived figures (the limit overcommit ratio).
void render_cgroups(const CgroupSection& section, const DerivedFigures& derived, MetricSink& sink);

}  // namespace memdiag::prom
