// SPDX-License-Identifier: Apache-2.0
#include "exporters/prometheus/verdict_metrics.hpp"

namespace memdiag::prom {

void render_level_states(MetricSink& sink, std::string_view name, std::string_view help, VerdictLevel level) {
  sink.family(name, help, prometheus::MetricType::Gauge);
  for (std::size_t i = 0; i < kVerdictLevelNames.size(); ++i) {
    sink.sample({{"level", kVerdictLevelNames[i]}}, static_cast<std::size_t>(level) == i ? 1 : 0);
  }
}

}  // namespace memdiag::prom
