// SPDX-License-Identifier: Apache-2.0
// What every verdict's series share: its level as a state set (1 for the current level, 0 for
// the others) and its reason codes (1 for each that holds), every series present from the first
// sample so a panel or alert never meets an absent series for "none".
#pragma once

#include <string_view>
#include <vector>

#include "exporters/prometheus/metric_sink.hpp"
#include "probes/core/verdict.hpp"

namespace memdiag::prom {

void render_level_states(MetricSink& sink, std::string_view name, std::string_view help, VerdictLevel level);

template <class Codes>
void render_reason_flags(MetricSink& sink, std::string_view name, std::string_view help, const Codes& codes,
                         const std::vector<VerdictReason>& reasons) {
  sink.family(name, help, prometheus::MetricType::Gauge);
  for (std::string_view code : codes) {
    bool holds = false;
    for (const VerdictReason& r : reasons) holds = holds || r.code == code;
    sink.sample({{"reason", code}}, holds ? 1 : 0);
  }
}

}  // namespace memdiag::prom
