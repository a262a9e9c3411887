// SPDX-License-Identifier: Apache-2.0
// Who causes the pressure and who suffers it, within a pressured scope (the node, or a cgroup
// with a limit: reclaim happens at both), how much stopping each cause would free against what
// is missing, and when the scope runs out at the present rate (see
// probes/analysis/pressure_roles.hpp and forecast.hpp). Plain data, computed once per sample.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probes/core/stall_verdict.hpp"

namespace memdiag {

enum class PressureRole : std::uint8_t { kNone, kContributor, kVictim };

inline constexpr std::string_view to_string(PressureRole role) {
  switch (role) {
    case PressureRole::kContributor: return "contributor";
    case PressureRole::kVictim: return "victim";
    case PressureRole::kNone: break;
  }
  return "none";
}

// One member of a scope (a child cgroup of a cgroup scope; a leaf cgroup of the node) with the
// figures its role was judged by.
struct ScopeMember {
  std::string cgroup;
  PressureRole role = PressureRole::kNone;
  // Its share of the pressure, against the WHOLE scope (not only what the members hold): half
  // its share of the scope's resident footprint (anon + shmem in RAM: what reclaim cannot take
  // back without swap), half its share of the footprint's growth (EMA); 0..1. The members'
  // ratios and the scope's unattributed remainder sum to 1.
  double contribution_ratio = 0;
  std::uint64_t footprint_bytes = 0;   // resident anon + shmem
  std::uint64_t swap_bytes = 0;        // what it has in swap (not in the footprint)
  double growth_bytes_per_second = 0;  // footprint growth, EMA (negative when shrinking)
  // What stopping it would free for certain, in RAM: its resident anonymous memory (shmem can
  // outlive it, file cache is reclaimable anyway). Swap it would free is apart: it relieves a
  // swap shortage, not a RAM one.
  std::uint64_t relief_bytes = 0;
  std::uint64_t relief_swap_bytes = 0;
  // What it suffers: its tasks' share of time stalled on memory (own PSI some, or eBPF stall
  // time where there is no per-cgroup PSI) and its file refaults over its file cache.
  std::optional<double> stall_ratio;
  std::optional<double> refault_ratio;
  std::optional<std::uint64_t> unbacked_promise_bytes;  // its processes' (process scan)
};

// One of the processes within a stalling scope that press on it most (the process source's
// selection: top-N by resident memory, by unbacked promise, by map count), judged like a member
// against the whole scope: its share of the scope's footprint, of its growth and of its
// unbacked promises (probes/analysis/process_members.hpp). Processes have no stall figure of
// their own, so they are only ever contributors.
struct ScopeProcess {
  int pid = 0;
  std::string comm;
  std::string cgroup;
  double contribution_ratio = 0;
  std::uint64_t footprint_bytes = 0;  // resident anon + shmem
  // Footprint growth between process scans (EMA); absent until the process was in two scans.
  std::optional<double> growth_bytes_per_second;
  std::uint64_t relief_bytes = 0;       // resident anon: the RAM stopping it frees for certain
  std::uint64_t relief_swap_bytes = 0;  // its swap: freed too, but that is not RAM
  std::uint64_t unbacked_promise_bytes = 0;
};

// What is said of a scope beyond its stall level.
struct ScopeAnalysis {
  // What it can still supply (node: MemAvailable; cgroup: its limit minus its working set,
  // usage less inactive file cache, as the kubelet counts it) and what is missing to the
  // headroom target (diagnosis.roles.headroom_ratio of its size).
  std::optional<std::uint64_t> available_bytes;
  std::optional<std::uint64_t> shortfall_bytes;
  // Seconds until `available_bytes` reaches 0 at the trend of the forecast window; absent
  // without a clear falling trend (probes/analysis/forecast.hpp).
  std::optional<double> exhaustion_seconds;
  // Short of memory: below its headroom target, or reclaiming at its own limit (a cgroup: its
  // limit was hit; the node: kswapd or direct reclaim, a global OOM). Only a short scope's stall
  // is its own, and only a short scope names contributors.
  bool short_of_memory = false;
  // What the scope holds resident (anon + shmem), and the part of it no member explains:
  // processes in the scope's own cgroup (the v1 root, a v1 cgroup with both processes and
  // children), cgroups not exported, tmpfs files no process maps.
  std::optional<std::uint64_t> footprint_bytes;
  std::optional<std::uint64_t> unattributed_bytes;
  // The remainder is among the contributors: most of what presses is held outside the members
  // (the processes then say by whom).
  bool unattributed_contributes = false;
  // While the scope stalls (level low or above): the members with a role, contributors first
  // (highest contribution first), then victims (most stalled first). At most max_members.
  // The contributors are the smallest set, largest first, whose relief covers the shortfall.
  std::vector<ScopeMember> members;
  // Members that were not named but contribute about as much as the last one named (within
  // diagnosis.roles.similar_ratio of it): "and N similar members".
  std::size_t similar_members = 0;
  // While the scope stalls: its contributing processes, highest contribution first. At most
  // max_members.
  std::vector<ScopeProcess> processes;
  // The level is held after the pressure eased (the hold keeps it): the reasons, members and
  // processes are those of the moment that set it.
  bool easing = false;
  // The node only: cgroup scopes stalling at their own limits in this sample. Their stalls show
  // in the node's PSI but are theirs, not the node's.
  std::size_t cgroups_at_limit = 0;
};

// A cgroup with a limit, judged as a scope of its own: its stall verdict (from its own PSI,
// eBPF stall time, limit events, refaults and OOM kills) and the analysis above.
struct CgroupScope {
  std::string cgroup;
  StallVerdict stall;
  ScopeAnalysis analysis;
};

}  // namespace memdiag
