// SPDX-License-Identifier: Apache-2.0
#include "probes/analysis/derive_figures.hpp"

#include "probes/analysis/limit_overcommit.hpp"
#include "probes/analysis/overcommit_model.hpp"
#include "probes/analysis/promise_capping.hpp"

namespace memdiag::analysis {

PromiseAdjustments promise_adjustments(const Snapshot& snapshot) {
  PromiseAdjustments a;
  if (!snapshot.processes) return a;
  const ProcessSection& processes = *snapshot.processes;
  a.uncharged_reservation_processes = processes.uncharged_reservation_processes;
  a.uncharged_reservation_bytes = processes.uncharged_reservation_bytes;
  // Pages mapped by several processes count in each one's RssAnon, once in AnonPages; both
  // were read at the end of the same scan. No RssAnon at all: a recording made before the sum.
  if (processes.anon_pages_bytes && processes.rss_anon_bytes > 0) {
    a.cow_shared_bytes =
        processes.rss_anon_bytes > *processes.anon_pages_bytes ? processes.rss_anon_bytes - *processes.anon_pages_bytes : 0;
  }
  if (snapshot.cgroups) {
    PromiseCapping capping = cap_promises(snapshot.cgroups->limits, processes.cgroups);
    a.capped_by_limits_bytes = capping.capped_by_limits_bytes;
    a.cgroups_over_limit = std::move(capping.over_limit);
    a.cgroups_over_limit_total = capping.over_limit_total;
  }
  return a;
}

void derive_figures(Snapshot& snapshot, const OvercommitThresholds& thresholds) {
  DerivedFigures& derived = snapshot.derived;
  derived = {};
  if (snapshot.cgroups && snapshot.system_memory) {
    derived.cgroup_limit_overcommit_ratio = limit_overcommit_ratio(*snapshot.cgroups, *snapshot.system_memory);
  }
  if (snapshot.system_memory) {
    derived.overcommit = assess_overcommit(*snapshot.system_memory, snapshot.overcommit_policy,
                                           derived.cgroup_limit_overcommit_ratio, thresholds,
                                           promise_adjustments(snapshot));
  }
}

}  // namespace memdiag::analysis
