// The diagnosis of one sample (issue 14), computed by the sampler after every source has
// sampled: the node's stall verdict (stall_model.hpp), every cgroup with a limit judged as a
// scope of its own (from its PSI, eBPF stall time, limit events, refaults and OOM kills, with
// the same thresholds and the same hysteresis), contributors and victims in each stalling scope
// (pressure_roles.hpp), the forecast (forecast.hpp) and the transitions of the levels, kept
// (bounded) for the API. Portable: it reads only the snapshot and the ring.
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
  struct ScopeState {
    LevelHold hold;
    AvailableTrend trend;
    FaultBaseline faults;  // a canary running in the scope's cgroup (canary.cgroups), if any
    VerdictLevel logged = VerdictLevel::kNone;
    std::uint64_t seen = 0;
  };

  void note_transition(std::vector<VerdictTransition>& out, const Snapshot& current, std::string scope,
                       VerdictLevel& logged, const StallVerdict& verdict, const ScopeAnalysis& analysis);

  DiagnosisSettings settings_;
  StallModel node_model_;
  BreakingModel breaking_model_;
  AvailableTrend node_trend_;
  AvailableTrend promise_trend_;  // the node's unbacked promise, for the drawdown forecast
  VerdictLevel node_logged_ = VerdictLevel::kNone;
  CgroupFigureTracker cgroup_figures_;
  ProcessGrowthTracker process_growth_;
  GrowthEma node_growth_;  // of the node's footprint (AnonPages + Shmem + swap in use)
  std::unordered_map<std::string, ScopeState> scopes_;
  std::uint64_t samples_ = 0;
  VerdictTimeline timeline_;
};

}  // namespace memdiag::analysis
