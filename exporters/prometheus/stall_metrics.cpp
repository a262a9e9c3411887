// SPDX-License-Identifier: Apache-2.0
#include "exporters/prometheus/stall_metrics.hpp"

#include "exporters/prometheus/verdict_metrics.hpp"

#include <algorithm>
#include <optional>
#include <utility>

namespace memdiag::prom {

using prometheus::MetricType;

void render_stall(const StallVerdict& v, MetricSink& sink) {
  sink.family("memdiag_stall_level",
              "Is the node stalling on memory: 0 none, 1 low, 2 medium, 3 high, 4 critical (rises at once, falls "
              "after the hold; memdiag_stall_reason says why).",
              MetricType::Gauge);
  sink.sample({}, static_cast<double>(v.level));
  render_level_states(sink, "memdiag_stall_state", "1 for the current stall level, 0 for the others.", v.level);
  render_reason_flags(sink, "memdiag_stall_reason",
                      "1 for each reason behind the stall level in the last window: stall_time, direct_reclaim, "
                      "memcg_limit, compaction, thrashing, oom_kill, swap_exhausted, slow_faults; on Windows "
                      "hard_faults and low_memory.",
                      stall_reason::kAll, v.reasons);
  sink.family("memdiag_stall_signal",
              "1 for each signal the stall verdict had this sample (psi, vmstat, ebpf, meminfo, canary; on "
              "Windows paging and low_memory).",
              MetricType::Gauge);
  for (std::string_view signal : {stall_signal::kPsi, stall_signal::kVmstat, stall_signal::kEbpf, stall_signal::kMeminfo,
                                  stall_signal::kCanary, stall_signal::kPaging, stall_signal::kLowMemory}) {
    const bool had = std::find(v.signals.begin(), v.signals.end(), signal) != v.signals.end();
    sink.sample({{"signal", signal}}, had ? 1 : 0);
  }
  sink.family("memdiag_stall_window_seconds",
              "The time the stall verdict's rates span: the window, less after a start, 0 before a second sample.",
              MetricType::Gauge);
  sink.sample({}, v.figures.window_seconds);
  // The numbers behind the reasons, whether or not they reach a threshold, each present while
  // the signals it comes from are.
  const StallFigures& f = v.figures;
  const std::pair<const char*, const std::optional<double>*> figures[] = {
      {"psi_some_ratio", &f.psi_some_ratio},
      {"psi_full_ratio", &f.psi_full_ratio},
      {"direct_reclaim_stall_ratio", &f.direct_reclaim_stall_ratio},
      {"memcg_reclaim_stall_ratio", &f.memcg_reclaim_stall_ratio},
      {"compaction_stall_ratio", &f.compaction_stall_ratio},
      {"allocstalls_per_second", &f.allocstalls_per_second},
      {"direct_scan_pages_per_second", &f.direct_scan_pages_per_second},
      {"compact_stalls_per_second", &f.compact_stalls_per_second},
      {"limit_events_per_second", &f.limit_events_per_second},
      {"refault_ratio", &f.refault_ratio},
      {"reclaim_inefficiency", &f.reclaim_inefficiency},
      {"oom_kills", &f.oom_kills},
      {"swap_free_ratio", &f.swap_free_ratio},
      {"fault_latency_ratio", &f.fault_latency_ratio},
      {"hard_faults_per_second", &f.hard_faults_per_second},
      {"pages_input_per_second", &f.pages_input_per_second},
      {"low_memory", &f.low_memory},
  };
  bool any = false;
  for (const auto& [name, value] : figures) {
    if (!value->has_value()) continue;
    if (!any) {
      sink.family("memdiag_stall_evidence",
                  "The stall verdict's figures over its window: PSI some/full and eBPF stall time as seconds per "
                  "second, vmstat counts per second, file refaults over the file cache (thrashing window), OOM "
                  "kills in the window, the share of swap free, the canary's page faults over its calm baseline; on "
                  "Windows hard faults and pages read in per second and the low-memory notification (1 or 0).",
                  MetricType::Gauge);
      any = true;
    }
    sink.sample({{"figure", name}}, **value);
  }
}

}  // namespace memdiag::prom
