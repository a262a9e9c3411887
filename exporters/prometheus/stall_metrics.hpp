// SPDX-License-Identifier: Apache-2.0
// memdiag_stall_* series from a snapshot's stall verdict (probes/analysis/stall_model.hpp):
// the level as a number and as a state set, every reason code with 1 when it holds, the figures
// behind them (memdiag_stall_evidence{figure}), and the signals the verdict had, so "none" with
// every signal missing is not mistaken for a calm node.
#pragma once

#include "exporters/prometheus/metric_sink.hpp"
#include "probes/core/stall_verdict.hpp"

namespace memdiag::prom {

void render_stall(const StallVerdict& verdict, MetricSink& sink);

}  // namespace memdiag::prom
