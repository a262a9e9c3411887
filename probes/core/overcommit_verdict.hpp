// SPDX-License-Identifier: Apache-2.0
// How much has been promised that cannot all be paid (the overcommit-risk model,
// probes/analysis/overcommit_model.hpp): the figures, mode-aware, and the risk they make.
// Plain data, computed once per sample and rendered from here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
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

// A cgroup whose processes were promised more private memory than its lowest limit on the way
// up: touching it all is an OOM kill at the ceiling, whatever page cache there is to reclaim,
// not a shortage of the node's.
struct CgroupOverLimit {
  std::string cgroup;
  std::uint64_t committed_private_bytes = 0; // its processes' private commit, descendants' included
  std::uint64_t unbacked_promise_bytes = 0;  // of it not backed yet
  std::uint64_t effective_limit_bytes = 0;   // the lowest limit on its way up
  std::uint64_t headroom_bytes = 0;          // what it can still draw before a limit stops it
  bool operator==(const CgroupOverLimit&) const = default;
};

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
  // Of the unbacked promise, what cannot come due as a draw on the node's memory, each apart:
  // - copy-on-write sharing: anonymous pages several processes map since a fork, which every
  //   sharer's commit counts in full (RssAnon summed over processes minus AnonPages);
  std::optional<std::uint64_t> cow_shared_bytes;
  // - what cgroup limits cap: promises of processes in limited cgroups beyond what the limits
  //   let those cgroups still draw (the limit tree's headroom); touching them ends in an OOM
  //   kill at the cgroup's ceiling (cgroups_over_limit), not in the node running out.
  std::uint64_t capped_by_limits_bytes = 0;
  // The unbacked promise that can come due on the node: unbacked_bytes minus the two above,
  // floored at 0. What the level is judged on.
  std::optional<std::uint64_t> charged_unbacked_bytes;
  // MAP_NORESERVE reservations told apart in the process scan (ProcessSection): never charged
  // in modes 0 and 1, so neither in unbacked_bytes nor among the promise holders.
  std::uint64_t uncharged_reservation_processes = 0;
  std::uint64_t uncharged_reservation_bytes = 0;
  // The cgroups that promised beyond their limits, the largest excess (private commit -
  // effective limit) first, at most a few; cgroups_over_limit_total counts them all. Each cgroup's own risk: it
  // does not raise the node's level.
  std::vector<CgroupOverLimit> cgroups_over_limit;
  std::size_t cgroups_over_limit_total = 0;
  // What the node can still hand out without killing: MemAvailable + SwapFree.
  std::uint64_t supply_bytes = 0;
  // charged unbacked / supply: above 1, the node cannot pay every promise that can come due;
  // absent when either is unknown or the supply is 0.
  std::optional<double> unbacked_to_supply_ratio;
  // The promises being paid: the rate the backed memory (AnonPages + Shmem + swap in use)
  // rises, from the forecast's least-squares line over its window, when it clearly rises.
  // Computed by the diagnosis model, which keeps the trend; absent outside the sampler.
  std::optional<double> payment_bytes_per_second;
  // While the charged unbacked promise exceeds the supply and is being paid at that rate, the
  // seconds until the payments have used up the supply: supply / rate. Absent otherwise (the
  // supply outlasts every promise, or nothing is being paid: promises cancelled by exits and
  // munmap lower the unbacked figure but pay nothing).
  std::optional<double> promise_exhaustion_seconds;
  // The cgroups' hard limits as they bind (each capped subtree once) over physical memory
  // (DerivedFigures'), if known.
  std::optional<double> cgroup_limit_overcommit_ratio;

  VerdictLevel level = VerdictLevel::kNone;
  std::vector<VerdictReason> reasons;  // the ones at level low or above, highest first
};

}  // namespace memdiag
