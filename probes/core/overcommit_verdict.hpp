// How much has been promised that cannot all be paid (issue 14, the overcommit-risk model,
// probes/analysis/overcommit_model.hpp): the figures, mode-aware, and the risk they make.
// Plain data, computed once per sample and rendered from here.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "probes/core/system_memory_section.hpp"
#include "probes/core/verdict.hpp"

namespace memdiag {

// The model's reason codes (exported as memdiag_overcommit_risk_reason{reason}).
namespace overcommit_reason {
// Modes heuristic and always: the unbacked promise against what the node can still supply.
inline constexpr std::string_view kUnbackedPromises = "unbacked_promises";
// Mode never (Linux 2, Windows): the commit charge against the enforced limit.
inline constexpr std::string_view kCommitLimit = "commit_limit";
// The hard limits of the leaf cgroups add up to more than physical memory.
inline constexpr std::string_view kCgroupLimits = "cgroup_limits";
// Mode always and unbacked_promises at medium or above: nothing refuses new promises. Context
// for the reason above, at level low.
inline constexpr std::string_view kOvercommitAlways = "overcommit_always";
inline constexpr std::string_view kAll[] = {kUnbackedPromises, kCommitLimit, kCgroupLimits, kOvercommitAlways};
}  // namespace overcommit_reason

struct OvercommitVerdict {
  OvercommitMode mode = OvercommitMode::kHeuristic;
  bool mode_known = false;  // false: the policy was not sampled; the heuristic mode is assumed

  // Committed_AS / CommitLimit (Windows: commit charge / commit limit). What mode never enforces.
  std::optional<double> commit_limit_ratio;
  // Committed_AS / (MemTotal + SwapTotal): sar -r's %commit, as a ratio.
  std::optional<double> commit_ratio;
  // Committed but not backed by RAM or swap now: commit charge minus commit_backed_bytes,
  // floored at 0. What comes due as page faults when the promises are used.
  std::optional<std::uint64_t> unbacked_bytes;
  // What the node can still hand out without killing: MemAvailable + SwapFree.
  std::uint64_t supply_bytes = 0;
  // unbacked / supply: above 1, the node cannot pay every promise it made; absent when either
  // is unknown or the supply is 0.
  std::optional<double> unbacked_to_supply_ratio;
  // The promises coming due (issue 14, the forecast): while the unbacked promise exceeds the
  // supply and is being drawn down at a clear rate (the forecast's least-squares line over its
  // window), the seconds until that rate has used up the supply: supply / rate. Absent
  // otherwise (the supply outlasts every promise, or no clear drawdown). Computed by the
  // diagnosis model, which keeps the trend; absent outside the sampler.
  std::optional<double> promise_exhaustion_seconds;
  // Sum of the leaf cgroups' hard limits over physical memory (DerivedFigures'), if known.
  std::optional<double> cgroup_limit_overcommit_ratio;

  VerdictLevel level = VerdictLevel::kNone;
  std::vector<VerdictReason> reasons;  // the ones at level low or above, highest first
};

}  // namespace memdiag
