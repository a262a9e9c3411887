// SPDX-License-Identifier: Apache-2.0
// Figures derived from a snapshot's sections rather than read from the system: computed once
// per sample by probes/analysis (analysis::derive_figures) after every source has sampled, and
// rendered from here, so no renderer or model computes them a second time. Plain data; absent
// when what it is derived from is.
#pragma once

#include <optional>
#include <vector>

#include "probes/core/breaking_verdict.hpp"
#include "probes/core/overcommit_verdict.hpp"
#include "probes/core/pressure_scope.hpp"
#include "probes/core/stall_verdict.hpp"
#include "probes/core/verdict_transition.hpp"

namespace memdiag {

struct DerivedFigures {
  // Sum of the hard limits of the limited leaf cgroups over physical memory: above 1 the
  // limits cannot all be honoured at once (probes/analysis/limit_overcommit.hpp).
  std::optional<double> cgroup_limit_overcommit_ratio;
  // How much is promised that cannot all be paid (probes/analysis/overcommit_model.hpp);
  // absent without the system memory section.
  std::optional<OvercommitVerdict> overcommit;
  // Is the node stalling on memory, and why (probes/analysis/stall_model.hpp); computed by the
  // sampler's stall model from this snapshot and the ring before it (a first snapshot, as
  // --once prints, has no window yet: level none, no rates). Absent outside the sampler.
  std::optional<StallVerdict> stall;
  // The node as a pressured scope: what it can supply, the forecast, contributors and victims
  // (probes/analysis/diagnosis_model.hpp). Absent outside the sampler, like `stall`.
  std::optional<ScopeAnalysis> node_scope;
  // Every exported cgroup with a limit (memory.max/high, v1 limit_in_bytes), judged as a scope;
  // in the cgroup section's order.
  std::vector<CgroupScope> cgroup_scopes;
  // What is about to break: processes near vm.max_map_count, cgroups near their limit, the
  // canary's allocator near its ceiling, recent OOM kills (probes/analysis/breaking_model.hpp).
  // Absent outside the sampler, like `stall`.
  std::optional<BreakingVerdict> breaking;
  // The last stall-level transitions of the node and the cgroup scopes (bounded), oldest first.
  VerdictTimeline timeline;
};

}  // namespace memdiag
