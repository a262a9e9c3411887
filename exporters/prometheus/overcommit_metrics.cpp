// SPDX-License-Identifier: Apache-2.0
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
  if (v.charged_unbacked_bytes) {
    gauge(sink, "memdiag_overcommit_charged_unbacked_bytes",
          "The unbacked promise that can come due on the node: memdiag_overcommit_unbacked_bytes minus copy-on-write "
          "sharing and what cgroup limits cap. The risk level is judged on it.",
          static_cast<double>(*v.charged_unbacked_bytes));
  }
  if (v.cow_shared_bytes) {
    gauge(sink, "memdiag_overcommit_cow_shared_bytes",
          "Anonymous pages mapped by several processes since a fork (RssAnon summed over processes minus AnonPages): "
          "in every sharer's commit, paid only when written.",
          static_cast<double>(*v.cow_shared_bytes));
  }
  gauge(sink, "memdiag_overcommit_capped_by_limits_bytes",
        "Unbacked promise of processes in limited cgroups beyond what those limits let them still draw from the node: "
        "it can only come due at the cgroups' own ceilings.",
        static_cast<double>(v.capped_by_limits_bytes));
  gauge(sink, "memdiag_overcommit_uncharged_reservation_bytes",
        "Private sizes of processes holding more than the node could have charged (MAP_NORESERVE reservations, never "
        "in Committed_AS under modes 0 and 1): left out of the promise holders.",
        static_cast<double>(v.uncharged_reservation_bytes));
  gauge(sink, "memdiag_overcommit_uncharged_reservation_processes",
        "Processes whose private size is more than the node could have charged (see "
        "memdiag_overcommit_uncharged_reservation_bytes).",
        static_cast<double>(v.uncharged_reservation_processes));
  gauge(sink, "memdiag_overcommit_cgroups_over_limit",
        "Cgroups whose processes' private commit is more than their lowest limit on the way up: each will be "
        "OOM-killed at its ceiling if it touches its promise.",
        static_cast<double>(v.cgroups_over_limit_total));
  // Announced (HELP and TYPE) even when no cgroup promised beyond its limits, so the alerts'
  // and dashboards' queries meet a known, empty family.
  {
    sink.family("memdiag_overcommit_cgroup_committed_private_bytes",
                "Private commit of a cgroup promised beyond its limits (its processes', descendants included); the "
                "largest excesses over memdiag_overcommit_cgroup_effective_limit_bytes only "
                "(memdiag_overcommit_cgroups_over_limit counts them all).",
                MetricType::Gauge);
    for (const CgroupOverLimit& c : v.cgroups_over_limit) {
      sink.sample({{"cgroup", c.cgroup}}, static_cast<double>(c.committed_private_bytes));
    }
    sink.family("memdiag_overcommit_cgroup_unbacked_bytes",
                "Of memdiag_overcommit_cgroup_committed_private_bytes, what is not backed yet: what touching it "
                "would draw.",
                MetricType::Gauge);
    for (const CgroupOverLimit& c : v.cgroups_over_limit) {
      sink.sample({{"cgroup", c.cgroup}}, static_cast<double>(c.unbacked_promise_bytes));
    }
    sink.family("memdiag_overcommit_cgroup_headroom_bytes",
                "What a cgroup promised beyond its limits can still draw before the lowest limit on its way up stops "
                "it (the series of memdiag_overcommit_cgroup_unbacked_bytes).",
                MetricType::Gauge);
    for (const CgroupOverLimit& c : v.cgroups_over_limit) {
      sink.sample({{"cgroup", c.cgroup}}, static_cast<double>(c.headroom_bytes));
    }
    sink.family("memdiag_overcommit_cgroup_effective_limit_bytes",
                "The lowest hard limit on the way up from a cgroup promised beyond its limits.", MetricType::Gauge);
    for (const CgroupOverLimit& c : v.cgroups_over_limit) {
      sink.sample({{"cgroup", c.cgroup}}, static_cast<double>(c.effective_limit_bytes));
    }
  }
  if (v.payment_bytes_per_second) {
    gauge(sink, "memdiag_overcommit_payment_bytes_per_second",
          "The rate promises are being paid: the rise of AnonPages plus Shmem plus swap in use over the forecast "
          "window, when it clearly rises.",
          *v.payment_bytes_per_second);
  }
  gauge(sink, "memdiag_overcommit_supply_bytes",
        "What the node can still hand out without killing: MemAvailable plus SwapFree.",
        static_cast<double>(v.supply_bytes));
  if (v.promise_exhaustion_seconds) {
    gauge(sink, "memdiag_overcommit_exhaustion_seconds",
          "Seconds until the promises being paid, at memdiag_overcommit_payment_bytes_per_second, use up what the "
          "node can supply; only while more can come due than the supply.",
          *v.promise_exhaustion_seconds);
  }
  if (v.unbacked_to_supply_ratio) {
    gauge(sink, "memdiag_overcommit_unbacked_to_supply_ratio",
          "Unbacked promise that can come due (memdiag_overcommit_charged_unbacked_bytes) over the supply: above 1 "
          "the node cannot pay every promise that can come due.",
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
