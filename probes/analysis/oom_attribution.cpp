// SPDX-License-Identifier: Apache-2.0
#include "probes/analysis/oom_attribution.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "probes/core/cgroup_path.hpp"

namespace memdiag::analysis {

namespace {

const CgroupSample* find_cgroup(const Snapshot& snapshot, std::string_view path) {
  if (!snapshot.cgroups) return nullptr;
  for (const CgroupSample& c : snapshot.cgroups->cgroups) {
    if (c.path == path) return &c;
  }
  return nullptr;
}

// A counter's growth between two readings; a counter that went down was reset (a re-created
// cgroup, a reloaded program): everything it counts now is new.
std::uint64_t growth(std::uint64_t before, std::uint64_t now) { return now >= before ? now - before : now; }

std::optional<std::uint64_t> growth(const std::optional<std::uint64_t>& before,
                                    const std::optional<std::uint64_t>& now) {
  if (!before || !now) return std::nullopt;
  return growth(*before, *now);
}

std::optional<std::uint64_t> event(const CgroupSample& c, CgroupEvent e) { return c.events[static_cast<int>(e)]; }

// Did this limited cgroup reach its hard limit between the two snapshots? By the kernel's own
// count of the limit being hit where both snapshots have one (v1 failcnt: charged to the cgroup
// whose limit refused, not to its children; v2 memory.events max and oom), else by its usage
// at either end.
bool hit_limit(const CgroupSample* now, const CgroupSample* before, double near_ratio) {
  const CgroupSample* any = now ? now : before;
  if (!any || !any->limited || !any->limit_bytes) return false;
  if (now && now->under_oom.value_or(false)) return true;
  if (now && before) {
    bool counted = false;
    for (const auto& [was, is] : {std::pair{before->failcnt, now->failcnt},
                                  std::pair{event(*before, CgroupEvent::kMax), event(*now, CgroupEvent::kMax)},
                                  std::pair{event(*before, CgroupEvent::kOom), event(*now, CgroupEvent::kOom)}}) {
      if (const auto g = growth(was, is)) {
        counted = true;
        if (*g > 0) return true;
      }
    }
    if (counted) return false;
  }
  for (const CgroupSample* c : {now, before}) {
    if (!c || !c->usage_bytes || !c->limit_bytes) continue;
    if (static_cast<double>(*c->usage_bytes) >= (1.0 - near_ratio) * static_cast<double>(*c->limit_bytes)) return true;
  }
  return false;
}

bool node_short(const Snapshot& current, const Snapshot& start, double near_ratio) {
  for (const Snapshot* s : {&current, &start}) {
    if (!s->system_memory || s->system_memory->physical_total_bytes == 0) continue;
    const SystemMemory& m = *s->system_memory;
    if (static_cast<double>(m.physical_available_bytes) <= near_ratio * static_cast<double>(m.physical_total_bytes)) {
      return true;
    }
  }
  return false;
}

std::optional<std::uint64_t> node_size(const Snapshot& current) {
  if (!current.system_memory || current.system_memory->physical_total_bytes == 0) return std::nullopt;
  return current.system_memory->physical_total_bytes;
}

bool ebpf_counts_victims(const Snapshot& s) {
  return s.reclaim_stall && !s.reclaim_stall->oom_victims_mode.empty();
}

struct Counted {
  std::string victim;
  std::uint64_t count;
  std::string_view counted_by;
};

// Kernel kills per victim cgroup by eBPF: each path's growth (a path new since `start` counts
// whole: the program counted since before `start`).
std::vector<Counted> ebpf_kills(const ReclaimStallSection& now, const ReclaimStallSection& before) {
  std::unordered_map<std::string_view, std::uint64_t> was;
  for (const CgroupOomVictims& v : before.oom_victims) was[v.cgroup] = v.count;
  std::vector<Counted> out;
  for (const CgroupOomVictims& v : now.oom_victims) {
    const auto it = was.find(v.cgroup);
    const std::uint64_t n = it == was.end() ? v.count : growth(it->second, v.count);
    if (n > 0) out.push_back({v.cgroup, n, "ebpf"});
  }
  return out;
}

// Kernel kills per victim cgroup by the cgroups' own counters, for the cgroups in both
// snapshots. v2's count is hierarchical: a cgroup keeps what its exported children do not
// explain.
std::vector<Counted> cgroup_counter_kills(const CgroupSection& now, const Snapshot& start) {
  const bool hierarchical = now.mode == "v2";
  // The start's cgroups by path, once: a lookup per cgroup of a node with hundreds of them.
  std::unordered_map<std::string_view, const CgroupSample*> then;
  if (start.cgroups) {
    then.reserve(start.cgroups->cgroups.size());
    for (const CgroupSample& c : start.cgroups->cgroups) then.emplace(c.path, &c);
  }
  std::map<std::string_view, std::uint64_t> grown;  // path -> growth of its oom_kill count
  for (const CgroupSample& c : now.cgroups) {
    const auto found = then.find(c.path);
    if (found == then.end()) continue;
    const CgroupSample* before = found->second;
    // Only a counter that moved: the rest cannot have killed anyone in the window.
    const auto g = growth(event(*before, CgroupEvent::kOomKill), event(c, CgroupEvent::kOomKill));
    if (!g || *g == 0) continue;
    grown[c.path] = *g;
  }
  std::vector<Counted> out;
  for (const auto& [path, g] : grown) {
    std::uint64_t own = g;
    if (hierarchical) {
      std::uint64_t children = 0;
      for (const auto& [other, other_g] : grown) {
        if (other != path && parent_cgroup(other) == path) children += other_g;
      }
      own = g > children ? g - children : 0;
    }
    if (own > 0) out.push_back({std::string(path), own, hierarchical ? "memory.events" : "memory.oom_control"});
  }
  return out;
}

}  // namespace

std::string oom_scope_of(std::string_view victim_cgroup, const Snapshot& current, const Snapshot& start,
                         const OomAttributionSettings& settings) {
  bool seen = false;  // the victim's cgroup or an ancestor below the root, in either snapshot
  for (std::string_view path = victim_cgroup; !path.empty(); path = parent_cgroup(path)) {
    const CgroupSample* now = find_cgroup(current, path);
    const CgroupSample* before = find_cgroup(start, path);
    if (path != "/" && (now || before)) seen = true;
    if (hit_limit(now, before, settings.near_limit_ratio)) return std::string(path);
  }
  // Nothing known of where it ran (a cgroup not exported, or gone): a limit of its own killed
  // it unless the node itself was short.
  if (!seen && !node_short(current, start, settings.near_limit_ratio)) return "";
  return "node";
}

std::vector<OomKill> attribute_oom_kills(const Snapshot& current, const Snapshot& start,
                                         const OomAttributionSettings& settings, const Snapshot* limit_start) {
  const Snapshot& limits_from = limit_start ? *limit_start : start;
  std::vector<OomKill> out;
  const auto scope_limit = [&](const std::string& scope) -> std::optional<std::uint64_t> {
    if (scope == "node") return node_size(current);
    const CgroupSample* c = find_cgroup(current, scope);
    if (!c) c = find_cgroup(start, scope);
    return c ? c->limit_bytes : std::nullopt;
  };

  std::vector<Counted> kernel;
  std::vector<const OomVictim*> new_victims;  // eBPF's ring: the victims since `start`
  if (ebpf_counts_victims(current) && ebpf_counts_victims(start)) {
    kernel = ebpf_kills(*current.reclaim_stall, *start.reclaim_stall);
    std::uint64_t seen = 0;
    for (const OomVictim& v : start.reclaim_stall->recent_oom_victims) seen = std::max(seen, v.sequence);
    for (const OomVictim& v : current.reclaim_stall->recent_oom_victims) {
      if (v.sequence > seen) new_victims.push_back(&v);
    }
  } else if (current.cgroups) {
    kernel = cgroup_counter_kills(*current.cgroups, start);
  }
  std::uint64_t attributed = 0;
  for (const Counted& k : kernel) {
    OomKill kill;
    kill.scope = oom_scope_of(k.victim, current, limits_from, settings);
    kill.victim_cgroup = k.victim;
    kill.count = k.count;
    kill.source = oom_killer::kKernel;
    kill.counted_by = k.counted_by;
    kill.scope_limit_bytes = scope_limit(kill.scope);
    for (const OomVictim* v : new_victims) {
      if (v->cgroup == k.victim) kill.victims.push_back(*v);
    }
    attributed += k.count;
    out.push_back(std::move(kill));
  }
  // Every kernel kill is in vmstat; what the per-cgroup counts do not explain happened in a
  // cgroup memdiag did not see (not exported, or created and removed between two samples).
  if (current.vmstat && start.vmstat) {
    const auto now = current.vmstat->get("oom_kill");
    const auto before = start.vmstat->get("oom_kill");
    if (now && before) {
      const std::uint64_t total = growth(*before, *now);
      if (total > attributed) {
        OomKill kill;
        kill.scope = node_short(current, limits_from, settings.near_limit_ratio) ? "node" : "";
        kill.count = total - attributed;
        kill.source = oom_killer::kKernel;
        kill.counted_by = "vmstat";
        if (!kill.scope.empty()) kill.scope_limit_bytes = node_size(current);
        for (const OomVictim* v : new_victims) {
          if (v->cgroup.empty()) kill.victims.push_back(*v);  // eBPF could not name its cgroup either
        }
        out.push_back(std::move(kill));
      }
    }
  }

  // Userspace killers: the cgroup they marked is the one they killed, and the scope they acted
  // for (systemd-oomd and oomd kill on pressure or swap, not at a limit). Caught as they were
  // marked where the marks are watched (also kills of cgroups removed since), else from the
  // marks of the cgroups still there.
  const auto watched_kills = [](const Snapshot& s) {
    return s.cgroups && s.cgroups->userspace_oom_kills ? &*s.cgroups->userspace_oom_kills : nullptr;
  };
  if (watched_kills(current) && watched_kills(start)) {
    std::uint64_t seen = 0;
    for (const UserspaceOomKill& k : *watched_kills(start)) seen = std::max(seen, k.sequence);
    std::vector<OomKill> kills;  // one per cgroup and killer, in the order first seen
    for (const UserspaceOomKill& k : *watched_kills(current)) {
      if (k.sequence <= seen) continue;
      const std::string_view source = k.trusted ? oom_killer::kOomd : oom_killer::kSystemdOomd;
      auto same = std::find_if(kills.begin(), kills.end(),
                               [&](const OomKill& o) { return o.scope == k.cgroup && o.source == source; });
      if (same != kills.end()) {
        same->count += k.count;
        continue;
      }
      const CgroupSample* c = find_cgroup(current, k.cgroup);
      if (!c) c = find_cgroup(start, k.cgroup);
      kills.push_back(OomKill{k.cgroup, k.cgroup, k.count, source, "xattr", c ? c->limit_bytes : std::nullopt, {}});
    }
    out.insert(out.end(), std::make_move_iterator(kills.begin()), std::make_move_iterator(kills.end()));
  } else if (current.cgroups) {
    for (const CgroupSample& c : current.cgroups->cgroups) {
      if (!c.oomd_trusted_kills && !c.oomd_user_kills) continue;  // never marked: nothing to look up
      const CgroupSample* before = find_cgroup(start, c.path);
      if (!before) continue;
      const auto mark = [&](std::optional<std::uint64_t> CgroupSample::*field) -> std::uint64_t {
        if (!(c.*field)) return 0;
        return growth((before->*field).value_or(0), *(c.*field));
      };
      const std::uint64_t by_oomd = mark(&CgroupSample::oomd_trusted_kills);
      // Newer oomd writes both namespaces: its user.* marks are not systemd-oomd's.
      const std::uint64_t by_systemd = by_oomd > 0 ? 0 : mark(&CgroupSample::oomd_user_kills);
      for (const auto& [n, source] : {std::pair{by_oomd, oom_killer::kOomd}, std::pair{by_systemd, oom_killer::kSystemdOomd}}) {
        if (n == 0) continue;
        out.push_back(OomKill{c.path, c.path, n, source, "xattr", c.limit_bytes, {}});
      }
    }
  }
  return out;
}

}  // namespace memdiag::analysis
