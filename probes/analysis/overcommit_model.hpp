// SPDX-License-Identifier: Apache-2.0
// The overcommit-risk model: how much the node has promised that it cannot all pay,
// in the terms of its overcommit mode.
//
// - Mode never (Linux vm.overcommit_memory=2, Windows always): the kernel refuses a commit past
//   its limit, so the risk is allocations failing: the commit charge against the limit.
// - Modes heuristic (0) and always (1): nothing is refused (mode 0 only refuses a single request
//   larger than RAM + swap), so promises pile up and come due as page faults, reclaim and OOM
//   kills: the unbacked promise (committed, not backed by RAM or swap now) against the supply
//   (MemAvailable + SwapFree). Unbacked over supply above 1 means the node cannot pay every
//   promise it made; the seed incident's training node was there for hours under mode 1.
//   Only the promise that can come due is charged (PromiseAdjustments): copy-on-write sharing
//   after fork is not a draw on memory until written, and what cgroup limits cap can never be
//   drawn from the node (a cgroup touching it is OOM-killed at its ceiling: its own risk,
//   listed, not the node's). MAP_NORESERVE reservations are not in Committed_AS at all.
// - Either way, cgroup hard limits adding up past physical memory are promises too (each capped
//   subtree counted once, at its effective cap).
//
// Defaults, and why (docs/verdicts.md "Overcommit risk"): no tool derives a risk from the mode (docs/diagnosis.md),
// so the bounds are ours: unbacked/supply 0.5 (low: half of what can still be handed out is
// already promised), 1 (medium: more is promised than can be supplied), 2 and 4 (high,
// critical); commit charge/limit 0.85, 0.90, 0.95, 0.98, and critical whatever the ratio when
// less than 100 MiB of commit is left, the kubelet's default hard eviction threshold for
// memory.available, which on Windows is exactly this headroom.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "probes/core/overcommit_verdict.hpp"
#include "probes/core/system_memory_section.hpp"
#include "probes/core/verdict.hpp"

namespace memdiag::analysis {

struct OvercommitThresholds {
  LevelThresholds unbacked_to_supply{0.5, 1.0, 2.0, 4.0};
  LevelThresholds commit_limit_ratio{0.85, 0.90, 0.95, 0.98};
  std::uint64_t commit_headroom_critical_bytes = 100ull << 20;
  LevelThresholds cgroup_limit_overcommit{1.0, 2.0, 1e300, 1e300};  // low and medium only
  bool operator==(const OvercommitThresholds&) const = default;
};

// What of the unbacked promise cannot come due on the node (derive_figures fills it from the
// process scan and the cgroup limit tree); empty: nothing separated.
struct PromiseAdjustments {
  std::optional<std::uint64_t> cow_shared_bytes;
  std::uint64_t capped_by_limits_bytes = 0;
  std::vector<CgroupOverLimit> cgroups_over_limit;
  std::size_t cgroups_over_limit_total = 0;
  std::uint64_t uncharged_reservation_processes = 0;
  std::uint64_t uncharged_reservation_bytes = 0;
};

// The verdict from one snapshot's figures. `policy` absent: the mode was not sampled, the
// heuristic mode is assumed and the verdict says so (mode_known false).
OvercommitVerdict assess_overcommit(const SystemMemory& memory, const std::optional<OvercommitPolicy>& policy,
                                    std::optional<double> cgroup_limit_overcommit_ratio,
                                    const OvercommitThresholds& thresholds = {},
                                    const PromiseAdjustments& adjustments = {});

}  // namespace memdiag::analysis
