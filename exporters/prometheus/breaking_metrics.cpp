// SPDX-License-Identifier: Apache-2.0
#include "exporters/prometheus/breaking_metrics.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "exporters/prometheus/verdict_metrics.hpp"

namespace memdiag::prom {

using prometheus::MetricType;

void render_breaking(const BreakingVerdict& v, MetricSink& sink) {
  sink.family("memdiag_breaking_level",
              "What is about to break: 0 none, 1 low, 2 medium, 3 high, 4 critical: the highest of the items "
              "(processes near vm.max_map_count, cgroups near their limit, the canary allocator near its ceiling, "
              "OOM kills in the last diagnosis.breaking.oom_window).",
              MetricType::Gauge);
  sink.sample({}, static_cast<double>(v.level));
  render_level_states(sink, "memdiag_breaking_state", "1 for the current breaking level, 0 for the others.", v.level);

  sink.family("memdiag_breaking_items", "Items of the breaking verdict, by kind (after the max_items cap).",
              MetricType::Gauge);
  for (std::string_view kind : breaking_kind::kAll) {
    const auto n = std::count_if(v.items.begin(), v.items.end(), [&](const BreakingItem& i) { return i.kind == kind; });
    sink.sample({{"kind", kind}}, static_cast<double>(n));
  }
  sink.family("memdiag_breaking_kind_level",
              "The highest level among the breaking verdict's items of each kind (0 none .. 4 critical).",
              MetricType::Gauge);
  for (std::string_view kind : breaking_kind::kAll) {
    VerdictLevel level = VerdictLevel::kNone;
    for (const BreakingItem& i : v.items) {
      if (i.kind == kind) level = std::max(level, i.level);
    }
    sink.sample({{"kind", kind}}, static_cast<double>(level));
  }
  sink.family("memdiag_breaking_items_dropped",
              "Items of the breaking verdict left out by diagnosis.breaking.max_items (the lowest levels).",
              MetricType::Gauge);
  sink.sample({}, static_cast<double>(v.dropped_items));

  // One series per (kind, subject): kills of one scope in several victim cgroups are one.
  std::map<std::pair<std::string_view, std::string_view>, VerdictLevel> subjects;
  for (const BreakingItem& i : v.items) {
    VerdictLevel& level = subjects[{i.kind, i.subject}];
    level = std::max(level, i.level);
  }
  // Announced with no item too, like every verdict family, so alerts and dashboards find it.
  sink.family("memdiag_breaking_item_level",
              "Each item of the breaking verdict by kind and subject (a process as \"pid N (comm)\", a cgroup path, "
              "\"node\"), its level 1 low .. 4 critical; /api/v1/diagnosis says why.",
              MetricType::Gauge);
  for (const auto& [key, level] : subjects) {
    sink.sample({{"kind", key.first}, {"subject", key.second}}, static_cast<double>(level));
  }
}

}  // namespace memdiag::prom
