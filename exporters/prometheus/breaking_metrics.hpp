// SPDX-License-Identifier: Apache-2.0
// The "about to break" verdict's series: its level (as a number and as a state set), per kind
// how many items there are and the highest level among them (every kind present from the first
// sample, so an alert never meets an absent series), and one series per item naming its
// subject, bounded by diagnosis.breaking.max_items.
#pragma once

#include "exporters/prometheus/metric_sink.hpp"
#include "probes/core/breaking_verdict.hpp"

namespace memdiag::prom {

void render_breaking(const BreakingVerdict& verdict, MetricSink& sink);

}  // namespace memdiag::prom
