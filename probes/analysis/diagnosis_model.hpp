// SPDX-License-Identifier: Apache-2.0
// The diagnosis of one sample, computed by the sampler after every source has sampled: every
// cgroup with a limit judged as a scope of its own (from its PSI, eBPF stall time, limit events,
// refaults and OOM kills), then the node (stall_model.hpp), with the same thresholds and the same
// hysteresis; each stall kept by the innermost scope that is short of memory (own_stall);
// contributors and victims in each stalling scope (pressure_roles.hpp), the forecast
// (forecast.hpp) and the transitions of the levels, kept (bounded) for the API. Portable: it
// reads only the snapshot and the ring.
#pragma once

#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

#include "probes/analysis/breaking_model.hpp"
#include "probes/analysis/cgroup_figures.hpp"
#include "probes/analysis/diagnosis_settings.hpp"
#include "probes/analysis/fault_baseline.hpp"
#include "probes/analysis/forecast.hpp"
#include "probes/analysis/growth_ema.hpp"
#include "probes/analysis/level_hold.hpp"
#include "probes/analysis/process_members.hpp"
#include "probes/analysis/promise_payment.hpp"
#include "probes/analysis/stall_model.hpp"
#include "probes/core/snapshot_store.hpp"

namespace memdiag::analysis {

class DiagnosisModel {
 public:
  static constexpr std::size_t kTimelineLength = 64;

  explicit DiagnosisModel(const DiagnosisSettings& settings = {});

  // Fills current.derived's stall, node_scope, cgroup_scopes and timeline from `current` and the
  // snapshots before it (`ring`, oldest first). Returns the transitions this sample made, for
  // the log. Call once per sample, in order.
  std::vector<VerdictTransition> assess(Snapshot& current, const std::vector<SnapshotPtr>& ring);

  // New settings from the next sample on. Changed stall thresholds or roles start the levels,
  // growth and trends afresh (they were judged by the old ones); the timeline is kept.
  void set_settings(const DiagnosisSettings& settings);

 private:
  // What set a scope's held level: kept while the hold keeps the level after the pressure eased,
  // so the report shows the reasons and roles of that moment, not this sample's calm.
  struct Evidence {
    VerdictLevel level = VerdictLevel::kNone;
    std::vector<VerdictReason> reasons;
    std::vector<ScopeMember> members;
    std::vector<ScopeProcess> processes;
    std::size_t similar_members = 0;
    bool unattributed_contributes = false;
  };

  struct ScopeState {
    LevelHold hold;
    AvailableTrend trend;
    FaultBaseline faults;  // a canary running in the scope's cgroup (canary.cgroups), if any
    Evidence peak;
    VerdictLevel logged = VerdictLevel::kNone;
    std::uint64_t seen = 0;
  };

  void note_transition(std::vector<VerdictTransition>& out, const Snapshot& current, std::string scope,
                       VerdictLevel& logged, const StallVerdict& verdict, const ScopeAnalysis& analysis);
  // Fills the roles of a scope whose held level is `verdict.level`: ranked now while the level
  // is this sample's own, or the peak's evidence while it is held (easing).
  void settle_roles(StallVerdict& verdict, ScopeAnalysis& analysis, Evidence& peak,
                    const std::vector<MemberFigures>& members, const ScopeWhole& whole,
                    const std::optional<ProcessScan>& scan, std::string_view cgroup);

  DiagnosisSettings settings_;
  StallModel node_model_;
  LevelHold node_hold_;
  Evidence node_peak_;
  BreakingModel breaking_model_;
  AvailableTrend node_trend_;
  PaymentTrend promise_payment_;  // the node's backed memory: the promises being paid
  VerdictLevel node_logged_ = VerdictLevel::kNone;
  CgroupFigureTracker cgroup_figures_;
  ProcessGrowthTracker process_growth_;
  GrowthEma node_growth_;  // of the node's footprint (AnonPages + Shmem + swap in use)
  std::unordered_map<std::string, ScopeState> scopes_;
  std::uint64_t samples_ = 0;
  VerdictTimeline timeline_;
};

}  // namespace memdiag::analysis
