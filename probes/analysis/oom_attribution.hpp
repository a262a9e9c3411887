// SPDX-License-Identifier: Apache-2.0
// Who was killed for memory between two snapshots, where, and whose limit it was: each kill is
// attributed to the scope whose limit caused it, the innermost limited cgroup (the victim's own
// or an ancestor) that hit its limit in the window, else the node (a global OOM). Pure: the
// stall verdict's oom_kill reason and the "about to break" verdict both read it.
//
// What counts a kernel kill, best first:
//   - eBPF (oom:mark_victim), per victim cgroup, kept a while after the cgroup is removed;
//   - without it, the cgroups' own counters: v1 memory.oom_control oom_kill counts only in the
//     victim's own cgroup (the kernel does not propagate it off the default hierarchy); v2
//     memory.events oom_kill is hierarchical, so a cgroup's own kills are its count less its
//     exported children's (a kill is never counted again in every ancestor);
//   - vmstat oom_kill counts every kernel kill, global or memcg: what neither of the above
//     explains is a kill whose cgroup memdiag did not see.
// Userspace killers mark the cgroups they kill with extended attributes (systemd-oomd:
// user.oomd_ooms / user.oomd_kill; oomd: trusted.*), read by the cgroup source.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probes/core/snapshot.hpp"

namespace memdiag::analysis {

struct OomKill {
  // The scope whose limit killed: a cgroup path, "node" (a global OOM), or "" when the victim's
  // cgroup is unknown and the node was not short of memory either (so no scope can be named).
  std::string scope;
  std::string victim_cgroup;  // "" when unknown
  std::uint64_t count = 0;
  std::string_view source;      // oom_killer::kKernel, kSystemdOomd, kOomd
  std::string_view counted_by;  // "ebpf", "memory.oom_control", "memory.events", "vmstat", "xattr"
  // The scope's hard limit (a cgroup) or physical memory (the node), when known.
  std::optional<std::uint64_t> scope_limit_bytes;
  // Who was killed, where eBPF's ring of the last victims says (pid and comm), oldest first;
  // empty otherwise.
  std::vector<OomVictim> victims;

  bool operator==(const OomKill&) const = default;
};

struct OomAttributionSettings {
  // Without a limit-hit counter (v1 failcnt, v2 memory.events max) in both snapshots, a limited
  // cgroup counts as at its limit when its usage was within this share of it at either end;
  // the node counts as short when MemAvailable was within this share of physical memory.
  double near_limit_ratio = 0.05;
};

// The kills between `start` and `current` (start older), attributed. Empty when nothing counts
// kills in both snapshots. Whether a limit was hit is judged from `limit_start` (older than or
// equal to `start`; `start` when null) to `current`: the failed charges that end in a kill take
// milliseconds, and the sources read one after the other, so with `start` the sample before
// they can fall just before it.
std::vector<OomKill> attribute_oom_kills(const Snapshot& current, const Snapshot& start,
                                         const OomAttributionSettings& settings = {},
                                         const Snapshot* limit_start = nullptr);

// The scope whose limit a kill of a task in `victim_cgroup` is charged to, by the rule above:
// "node" when no limited ancestor hit its limit between `start` and `current`; "" when neither
// snapshot has the cgroup or an ancestor below the root (not exported, or gone) and the node
// was not short either.
std::string oom_scope_of(std::string_view victim_cgroup, const Snapshot& current, const Snapshot& start,
                         const OomAttributionSettings& settings = {});

}  // namespace memdiag::analysis
