#include "exporters/prometheus/overcommit_metrics.hpp"

#include <algorithm>

namespace memdiag::prom {
namespace {

using prometheus::MetricType;

void gauge(MetricSink& sink, const char* name, const char* help, double value) {
  sink.family(name, help, MetricType::Gauge);
  sink.sample({}, value);
}

}  // namespace

void render_overcommit(const OvercommitVerdict& v, MetricSink& sink) {
  if (v.unbacked_bytes) {
    gauge(sink, "memdiag_overcommit_unbacked_bytes",
          "Memory committed to processes and not backed by RAM or swap now: Committed_AS minus "
          "AnonPages, Shmem and swap in use, floored at 0. Comes due as page faults.",
          static_cast<double>(*v.unbacked_bytes));
  }
  gauge(sink, "memdiag_overcommit_supply_bytes",
        "What the node can still hand out without killing: MemAvailable plus SwapFree.",
        static_cast<double>(v.supply_bytes));
  if (v.unbacked_to_supply_ratio) {
    gauge(sink, "memdiag_overcommit_unbacked_to_supply_ratio",
          "Unbacked promises over the supply: above 1 the node cannot pay every promise it made.",
          *v.unbacked_to_supply_ratio);
  }
  if (v.commit_limit_ratio) {
    gauge(sink, "memdiag_overcommit_commit_limit_ratio",
          "Committed_AS over CommitLimit; the limit is enforced only under vm.overcommit_memory=2.",
          *v.commit_limit_ratio);
  }
  if (v.commit_ratio) {
    gauge(sink, "memdiag_overcommit_commit_ratio",
          "Committed_AS over MemTotal plus SwapTotal (sar -r's %commit, as a ratio).", *v.commit_ratio);
  }
  gauge(sink, "memdiag_overcommit_risk_level",
        "Overcommit risk: 0 none, 1 low, 2 medium, 3 high, 4 critical (memdiag_overcommit_risk_reason says why).",
        static_cast<double>(v.level));
  sink.family("memdiag_overcommit_risk_state", "1 for the current overcommit risk level, 0 for the others.",
              MetricType::Gauge);
  for (std::size_t i = 0; i < kVerdictLevelNames.size(); ++i) {
    sink.sample({{"level", kVerdictLevelNames[i]}}, static_cast<std::size_t>(v.level) == i ? 1 : 0);
  }
  sink.family("memdiag_overcommit_risk_reason",
              "1 for each reason behind the overcommit risk level now: unbacked_promises (modes 0 and 1), "
              "commit_limit (mode 2), cgroup_limits, overcommit_always (mode 1 with promises past the supply).",
              MetricType::Gauge);
  for (std::string_view code : overcommit_reason::kAll) {
    const bool holds = std::any_of(v.reasons.begin(), v.reasons.end(), [&](const VerdictReason& r) { return r.code == code; });
    sink.sample({{"reason", code}}, holds ? 1 : 0);
  }
  sink.family("memdiag_overcommit_mode_info",
              "The overcommit mode the verdict assumed (1): heuristic, always or never; assumed=\"true\" when "
              "vm.overcommit_memory was not sampled.",
              MetricType::Gauge);
  sink.sample({{"mode", to_string(v.mode)}, {"assumed", v.mode_known ? "false" : "true"}}, 1);
}

}  // namespace memdiag::prom
