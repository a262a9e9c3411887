// SPDX-License-Identifier: Apache-2.0
// Per cgroup figures over the model's windows, for every exported cgroup: what the cgroup
// scopes are judged by (probes/analysis/cgroup_scopes.hpp) and what members are ranked by
// (pressure_roles.hpp). Rates come from the cgroup's own counters at the window's start in the
// ring (PSI totals, memory.events, failcnt, refaults, OOM kills) and from the eBPF stall time
// of its subtree (eBPF attributes a stall to the task's own, usually leaf, cgroup). Growth is an
// EMA kept per cgroup across samples, forgotten when the cgroup is no longer exported.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "probes/analysis/growth_ema.hpp"
#include "probes/analysis/stall_model.hpp"
#include "probes/analysis/stall_persistence.hpp"
#include "probes/core/snapshot_store.hpp"
#include "probes/core/stall_verdict.hpp"

namespace memdiag::analysis {

struct CgroupFigures {
  const CgroupSample* sample = nullptr;  // in the current snapshot
  StallFigures stall;                    // its rates (window, thrashing window) and persistence
  std::vector<std::string_view> signals;
  std::uint64_t footprint_bytes = 0;     // resident anon + shmem (its subtree's)
  std::uint64_t swap_bytes = 0;          // in swap (its subtree's)
  double growth_bytes_per_second = 0;    // of the footprint, EMA
  std::uint64_t relief_bytes = 0;        // resident anon: the RAM stopping it frees
  // A cgroup with a limit (the lower of the hard limit and memory.high): its size, and what it
  // can still supply (size less working set, usage less inactive file cache, as the kubelet
  // counts it), and the same without any file cache (what the forecast follows: cache that
  // can be reclaimed is never an exhaustion).
  std::optional<std::uint64_t> size_bytes;
  std::optional<std::uint64_t> available_bytes;
  std::optional<std::uint64_t> available_beyond_cache_bytes;
  std::optional<std::uint64_t> unbacked_promise_bytes;  // its subtree's processes'
  // Its tasks' share of time stalled: PSI some where there is per-cgroup PSI, else the eBPF
  // stall time of its subtree.
  std::optional<double> stall_ratio() const;
};

class CgroupFigureTracker {
 public:
  // One entry per cgroup of current.cgroups, in its order (empty without the section). The
  // stall thresholds give the windows, the persistence spans and the refault floor.
  std::vector<CgroupFigures> compute(const Snapshot& current, const std::vector<SnapshotPtr>& ring,
                                     const StallThresholds& stall, std::chrono::milliseconds growth_half_life);

 private:
  // What is remembered of a cgroup between samples.
  struct Memory {
    GrowthEma ema;
    StallPersistence psi_some, psi_full, ebpf;
    std::uint64_t seen = 0;  // the sample it was last updated in
  };
  std::unordered_map<std::string, Memory> memory_;
  std::uint64_t samples_ = 0;
};

}  // namespace memdiag::analysis
