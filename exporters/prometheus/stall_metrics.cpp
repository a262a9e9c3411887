#include "exporters/prometheus/stall_metrics.hpp"

#include <algorithm>

namespace memdiag::prom {

using prometheus::MetricType;

void render_stall(const StallVerdict& v, MetricSink& sink) {
  sink.family("memdiag_stall_level",
              "Is the node stalling on memory: 0 none, 1 low, 2 medium, 3 high, 4 critical (rises at once, falls "
              "after the hold; memdiag_stall_reason says why).",
              MetricType::Gauge);
  sink.sample({}, static_cast<double>(v.level));
  sink.family("memdiag_stall_state", "1 for the current stall level, 0 for the others.", MetricType::Gauge);
  for (std::size_t i = 0; i < kVerdictLevelNames.size(); ++i) {
    sink.sample({{"level", kVerdictLevelNames[i]}}, static_cast<std::size_t>(v.level) == i ? 1 : 0);
  }
  sink.family("memdiag_stall_reason",
              "1 for each reason behind the stall level in the last window: stall_time, direct_reclaim, memcg_limit, "
              "compaction, thrashing, oom_kill, swap_exhausted.",
              MetricType::Gauge);
  for (std::string_view code : stall_reason::kAll) {
    const bool holds = std::any_of(v.reasons.begin(), v.reasons.end(), [&](const VerdictReason& r) { return r.code == code; });
    sink.sample({{"reason", code}}, holds ? 1 : 0);
  }
  if (!v.reasons.empty()) sink.family("memdiag_stall_reason_value",
              "The figure behind each reason that holds (stall_time and the eBPF causes: seconds stalled per second; "
              "thrashing: refaults over the file cache; oom_kill: kills in the window; counts per second otherwise).",
              MetricType::Gauge);
  for (const VerdictReason& r : v.reasons) sink.sample({{"reason", r.code}}, r.value);  // none: no family
  sink.family("memdiag_stall_signal", "1 for each signal the stall verdict had this sample (psi, vmstat, ebpf, meminfo).",
              MetricType::Gauge);
  for (std::string_view signal : {stall_signal::kPsi, stall_signal::kVmstat, stall_signal::kEbpf, stall_signal::kMeminfo}) {
    const bool had = std::find(v.signals.begin(), v.signals.end(), signal) != v.signals.end();
    sink.sample({{"signal", signal}}, had ? 1 : 0);
  }
  if (v.figures.window_seconds > 0) {
    sink.family("memdiag_stall_window_seconds", "The time the stall verdict's rates span (the window, or less after a start).",
                MetricType::Gauge);
    sink.sample({}, v.figures.window_seconds);
  }
}

}  // namespace memdiag::prom
