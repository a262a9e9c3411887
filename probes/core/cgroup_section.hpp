// SPDX-License-Identifier: Apache-2.0
// The cgroup view of a snapshot: per memory cgroup usage, limits, events, reclaim-related
// memory.stat keys and PSI, for the cgroups kept by the cap, plus what the cap dropped.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probes/core/pressure_section.hpp"
#include "probes/core/workload_identity.hpp"

namespace memdiag {

// memory.events keys (v2); v1 fills only kOomKill (from memory.oom_control).
enum class CgroupEvent : std::uint8_t { kLow, kHigh, kMax, kOom, kOomKill, kOomGroupKill };
inline constexpr std::array<std::string_view, 6> kCgroupEventNames = {"low", "high", "max", "oom", "oom_kill",
                                                                      "oom_group_kill"};

struct CgroupStatValue {
  std::string_view key;  // canonical (v2) spelling, static storage
  std::uint64_t value;
  bool counter;          // event counter (pgscan, workingset_refault_file) vs bytes (anon, file)

  bool operator==(const CgroupStatValue&) const = default;
};

// Kernel notifications counted by the event watcher (v1 memory.pressure_level and
// memory.oom_control eventfds), cumulative since the cgroup started being watched.
struct CgroupNotifications {
  bool has_pressure_levels = true;          // v1 only: v2 has no memory.pressure_level
  std::array<std::uint64_t, 3> pressure{};  // by level: low, medium, critical
  std::uint64_t oom = 0;                    // v1 oom_control notifications; v2 "oom" events seen by inotify

  bool operator==(const CgroupNotifications&) const = default;
};
inline constexpr std::array<std::string_view, 3> kPressureLevelNames = {"low", "medium", "critical"};

struct CgroupSample {
  std::string path;  // relative to the hierarchy root: "/" or "/kubepods.slice/..."
  WorkloadIdentity identity;
  bool leaf = true;  // no child cgroup was discovered under it

  std::optional<std::uint64_t> usage_bytes;
  std::optional<std::uint64_t> limit_bytes;  // absent when unlimited or unknown
  bool limited = false;                      // a finite hard limit is set
  std::optional<std::uint64_t> high_bytes;   // v2 memory.high, absent when "max"
  std::optional<std::uint64_t> low_bytes;    // v2 memory.low
  std::optional<std::uint64_t> swap_usage_bytes;   // v2 memory.swap.current
  std::optional<std::uint64_t> memsw_usage_bytes;  // v1 memory+swap
  std::optional<std::uint64_t> memsw_limit_bytes;  // v1, absent when unlimited
  std::optional<std::uint64_t> failcnt;            // v1 memory.failcnt
  std::optional<bool> under_oom;                   // v1 memory.oom_control
  std::array<std::optional<std::uint64_t>, 6> events;  // by CgroupEvent
  std::vector<CgroupStatValue> stat;
  std::optional<PsiResource> pressure;  // memory.pressure (v2, or the unified twin in hybrid mode)
  std::optional<CgroupNotifications> notifications;  // for the cgroups the event watcher covers
  // Kills by userspace OOM killers, from the extended attributes they set on a cgroup they
  // kill: processes killed (*.oomd_kill), or kill actions (*.oomd_ooms) where no process count
  // was written. user.* is systemd-oomd's (newer oomd writes it too), trusted.* only oomd's.
  // Absent when the cgroup carries no such attribute.
  std::optional<std::uint64_t> oomd_user_kills;
  std::optional<std::uint64_t> oomd_trusted_kills;

  bool operator==(const CgroupSample&) const = default;
};

// A cgroup with a finite hard limit, as the limit tree sees it (cgroup_limit_tree.hpp): what it
// and every limited ancestor allow. What the overcommit model caps promises with.
struct CgroupLimit {
  std::string path;
  std::uint64_t limit_bytes = 0;            // its own hard limit
  std::uint64_t usage_bytes = 0;            // what its subtree uses now
  // The minimum of its own and every discovered ancestor's hard limit.
  std::uint64_t effective_limit_bytes = 0;
  // What its subtree can still draw from the node before a limit on the way up stops it: the
  // minimum of (limit - usage), floored at 0, over itself and its limited ancestors.
  std::uint64_t headroom_bytes = 0;
  bool operator==(const CgroupLimit&) const = default;
};

// A kill by a userspace OOM killer, seen as it marked the cgroup (oomd_mark_watcher.hpp): the
// cgroup may be gone by the next sample (systemd removes a killed transient unit's at once).
struct UserspaceOomKill {
  std::uint64_t sequence = 0;  // 1, 2, ... in the order seen since the daemon started
  std::string cgroup;          // its path, relative to the hierarchy root
  std::uint64_t count = 0;     // processes killed, or kill actions where no process count was written
  bool trusted = false;        // a trusted.* mark (oomd's); user.* otherwise (systemd-oomd's)

  bool operator==(const UserspaceOomKill&) const = default;
};

struct CgroupSection {
  std::string_view mode;  // "v1", "v2" or "hybrid" (v1 memory, PSI from cgroup2)
  std::uint32_t page_bytes = 4096;  // the unit of memory.stat's page counters (refaults, pgscan)
  std::vector<CgroupSample> cgroups;  // the ones kept by the cap, most important first
  std::size_t discovered = 0;         // memory cgroups found within depth and patterns
  std::size_t dropped = 0;            // discovered but not exported because of the cap
  std::uint64_t leaf_limits_sum_bytes = 0;  // sum of the hard limits of all limited leaf cgroups
  // The limits as they bind (cgroup_limit_tree.hpp): each capped subtree counted once, at the
  // lower of its own limit and what its limited descendants add up to. Absent in recordings
  // made before it existed.
  std::optional<std::uint64_t> effective_limits_sum_bytes;
  // Every discovered cgroup with a hard limit, shallowest first up to a cap (so a cgroup's
  // limited ancestors are always there before it), then ordered by path; limits_dropped says
  // how many the cap left out (their promises are capped by an ancestor kept, or not at all).
  std::vector<CgroupLimit> limits;
  std::size_t limits_dropped = 0;
  std::size_t limited_leaves = 0;
  std::size_t unlimited_leaves = 0;
  std::size_t watched = 0;          // cgroups with event notifications registered
  // OOMs in watched cgroups, each counted once (CgroupEventWatcher::oom_total), including those
  // of cgroups removed or no longer watched since (whose per-cgroup series are gone); absent
  // without a watcher.
  std::optional<std::uint64_t> oom_notifications;
  // The last kills userspace OOM killers marked, oldest first (at most kMaxUserspaceOomKills);
  // absent when the marks are not watched as they are written (no inotify), so only the
  // per-cgroup marks of cgroups still there at a sample count.
  std::optional<std::vector<UserspaceOomKill>> userspace_oom_kills;
  static constexpr std::size_t kMaxUserspaceOomKills = 32;
  std::uint64_t tree_walks = 0;     // times the hierarchy was listed (only when it changed)
  std::size_t open_files = 0;       // cgroup file descriptors kept open between samples
  std::size_t malformed_files = 0;  // cgroup files present but unparsable this sample
  std::string first_malformed;      // the first of them: file and reason

  bool operator==(const CgroupSection&) const = default;
};

}  // namespace memdiag
