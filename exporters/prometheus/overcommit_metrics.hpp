// SPDX-License-Identifier: Apache-2.0
// memdiag_overcommit_* series from a snapshot's overcommit verdict (probes/analysis/
// overcommit_model.hpp): the figures, the risk level as a number and as a state set, and every
// reason code with 1 when it holds, so each series exists from the first sample on and an
// alert or a panel never meets an absent series for "no risk".
#pragma once

#include "exporters/prometheus/metric_sink.hpp"
#include "probes/core/overcommit_verdict.hpp"

namespace memdiag::prom {

void render_overcommit(const OvercommitVerdict& verdict, MetricSink& sink);

}  // namespace memdiag::prom
