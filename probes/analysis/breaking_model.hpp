// SPDX-License-Identifier: Apache-2.0
// What is about to break (probes/core/breaking_verdict.hpp), judged once per sample:
//   - processes near vm.max_map_count (the process source's selection: top-N by map count and
//     every process above its threshold);
//   - cgroups whose memory that reclaim cannot free is near their hard limit;
//   - the canary's allocator near its ceiling, or refusing allocations;
//   - tasks killed for memory in the last oom_window (kernel, systemd-oomd, oomd), each charged
//     to the scope whose limit killed it (oom_attribution.hpp), held for the window so a kill
//     between two scrapes, or in a cgroup removed right after, is not lost.
// Portable: reads only snapshots.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>

#include "probes/analysis/oom_attribution.hpp"
#include "probes/core/breaking_verdict.hpp"
#include "probes/core/snapshot.hpp"
#include "probes/core/snapshot_store.hpp"

namespace memdiag::analysis {

struct BreakingSettings {
  // map_count / vm.max_map_count. At 1.0 mmap fails, and so does a munmap or mprotect that
  // splits a mapping (the split needs one more). 0.8 is the process source's default
  // map_areas_threshold and the MemdiagMapCountHeadroomLow alert (13,000 mappings of room at
  // the default 65530: hours for a leak of a few a second), 0.9 the critical alert's bound,
  // 0.99 is 655 mappings: one burst of a fragmenting allocator. 0.7 notes it early (low).
  LevelThresholds map_areas_ratio{0.7, 0.8, 0.9, 0.99};
  // (usage - reclaimable page cache) / hard limit. What reclaim cannot free (anon, shmem,
  // kernel memory) meets the limit in an OOM kill inside the cgroup. 10 % left is the
  // diagnosis' headroom target (roles.headroom_ratio) and the kubelet's order of margin (its
  // hard eviction at 100Mi is 10 % of a 1 GiB pod), 5 % is a few seconds of growth for a job
  // that grows at all; 99 %: the next allocation may be the one that kills.
  LevelThresholds cgroup_limit_ratio{0.85, 0.90, 0.95, 0.99};
  // The canary allocator's held bytes / its ceiling (retention near the ceiling makes it
  // release or fail: the seed incident's allocator failed at its 8 GB ceiling).
  LevelThresholds allocator_ceiling_ratio{0.8, 0.9, 0.95, 0.99};
  // How long a kill stays an item (the kubelet's pressure transition period is 5 minutes; a
  // scrape every 15-60 s sees it many times).
  std::chrono::milliseconds oom_window{std::chrono::minutes(5)};
  // Items kept, the highest level first (the JSON, the page and the per-subject series).
  std::size_t max_items = 20;
  OomAttributionSettings oom;
  bool operator==(const BreakingSettings& o) const {
    return map_areas_ratio == o.map_areas_ratio && cgroup_limit_ratio == o.cgroup_limit_ratio &&
           allocator_ceiling_ratio == o.allocator_ceiling_ratio && oom_window == o.oom_window &&
           max_items == o.max_items && oom.near_limit_ratio == o.oom.near_limit_ratio;
  }
};

// The level an OOM kill item gets: a kill already broke a job (high); three or more kills by
// one scope within the window are a crash loop (critical).
inline constexpr std::uint64_t kOomCrashLoopKills = 3;

// The items that need no history: processes near vm.max_map_count and cgroups near their
// limit (the allocator's item also counts the refusals of the window: BreakingModel).
void judge_walls(const Snapshot& current, const BreakingSettings& settings, std::vector<BreakingItem>& out);

class BreakingModel {
 public:
  explicit BreakingModel(const BreakingSettings& settings = {}) : settings_(settings) {}

  // The verdict for `current`; `ring` holds the samples before it, oldest first: kills and
  // allocator failures since the last one are added to those held from the window (whose limit
  // killed is judged over the last kLimitWindow). Call once per sample, in order.
  BreakingVerdict assess(const Snapshot& current, const std::vector<SnapshotPtr>& ring);
  // The same with only the sample before (nullptr for the first), for tests and replays.
  BreakingVerdict assess(const Snapshot& current, const Snapshot* previous, const Snapshot* limit_start = nullptr);

  // How far back a limit hit counts for a kill: a few samples at the shortest intervals.
  static constexpr std::chrono::seconds kLimitWindow{2};

  void set_settings(const BreakingSettings& settings) { settings_ = settings; }

 private:
  struct Held {
    std::chrono::system_clock::time_point at;
    OomKill kill;
  };
  BreakingSettings settings_;
  std::deque<Held> kills_;
  std::deque<std::pair<std::chrono::system_clock::time_point, std::uint64_t>> allocator_failures_;
};

}  // namespace memdiag::analysis
