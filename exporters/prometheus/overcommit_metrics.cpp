#include "exporters/prometheus/overcommit_metrics.hpp"

#include "exporters/prometheus/verdict_metrics.hpp"

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
  if (v.promise_exhaustion_seconds) {
    gauge(sink, "memdiag_overcommit_exhaustion_seconds",
          "Seconds until the promises coming due, at the rate the unbacked promise fell over the forecast window, "
          "use up what the node can supply; only while more is promised than the supply.",
          *v.promise_exhaustion_seconds);
  }
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
  render_level_states(sink, "memdiag_overcommit_risk_state", "1 for the current overcommit risk level, 0 for the others.",
                      v.level);
  render_reason_flags(sink, "memdiag_overcommit_risk_reason",
                      "1 for each reason behind the overcommit risk level now: unbacked_promises (modes 0 and 1), "
                      "commit_limit (mode 2), cgroup_limits, overcommit_always (mode 1 with promises past the supply).",
                      overcommit_reason::kAll, v.reasons);
  sink.family("memdiag_overcommit_mode_info",
              "The overcommit mode the verdict assumed (1): heuristic, always or never; assumed=\"true\" when "
              "vm.overcommit_memory was not sampled.",
              MetricType::Gauge);
  sink.sample({{"mode", to_string(v.mode)}, {"assumed", v.mode_known ? "false" : "true"}}, 1);
}

}  // namespace memdiag::prom
