// SPDX-License-Identifier: Apache-2.0
#include "probes/analysis/breaking_model.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "probes/analysis/verdict_evidence.hpp"

namespace memdiag::analysis {

namespace {

// 63028 -> "63,028": map counts are read by people, digit by digit.
std::string grouped(std::uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string percent(double ratio) {
  std::string out;
  append_format(out, "%.0f %%", ratio * 100);
  return out;
}

std::optional<std::uint64_t> stat_bytes(const CgroupSample& c, std::string_view key) {
  for (const CgroupStatValue& s : c.stat) {
    if (s.key == key) return s.value;
  }
  return std::nullopt;
}

void map_area_items(const ProcessSection& processes, const BreakingSettings& settings, std::vector<BreakingItem>& out) {
  if (processes.max_map_count == 0) return;
  for (const SelectedProcess& p : processes.selected) {
    const VerdictLevel level = level_reached(p.map_areas_ratio, settings.map_areas_ratio);
    if (level == VerdictLevel::kNone) continue;
    BreakingItem item;
    item.kind = breaking_kind::kMapAreas;
    item.level = level;
    item.subject = "pid " + std::to_string(p.pid) + " (" + p.comm + ")";
    item.pid = p.pid;
    item.comm = p.comm;
    item.cgroup = p.cgroup;
    item.value = p.map_count;
    item.limit = static_cast<double>(processes.max_map_count);
    item.ratio = p.map_areas_ratio;
    item.explanation = item.subject + " holds " + grouped(p.map_count) + " of " + grouped(processes.max_map_count) +
                       " map areas (vm.max_map_count): any mmap, and any munmap or mprotect that splits a mapping, " +
                       (p.map_count >= processes.max_map_count ? "fails" : "will fail") +
                       " with ENOMEM regardless of free memory.";
    out.push_back(std::move(item));
  }
}

// What reclaim cannot take from a cgroup: its usage less its page cache that is not shmem
// (memory.stat file includes shmem on both versions; shmem and tmpfs go to swap or nowhere).
// Without `file`, the kubelet's working set (usage less inactive file) stands in.
std::optional<std::uint64_t> unreclaimable_bytes(const CgroupSample& c) {
  if (!c.usage_bytes) return std::nullopt;
  std::uint64_t reclaimable = 0;
  if (const auto file = stat_bytes(c, "file")) {
    const std::uint64_t shmem = stat_bytes(c, "shmem").value_or(0);
    reclaimable = *file > shmem ? *file - shmem : 0;
  } else if (const auto inactive = stat_bytes(c, "inactive_file")) {
    reclaimable = *inactive;
  }
  return *c.usage_bytes > reclaimable ? *c.usage_bytes - reclaimable : 0;
}

void cgroup_limit_items(const CgroupSection& cgroups, const BreakingSettings& settings, std::vector<BreakingItem>& out) {
  for (const CgroupSample& c : cgroups.cgroups) {
    if (!c.limited || !c.limit_bytes || *c.limit_bytes == 0) continue;
    const auto held = unreclaimable_bytes(c);
    if (!held) continue;
    const double ratio = static_cast<double>(*held) / static_cast<double>(*c.limit_bytes);
    const VerdictLevel level = level_reached(ratio, settings.cgroup_limit_ratio);
    if (level == VerdictLevel::kNone) continue;
    BreakingItem item;
    item.kind = breaking_kind::kCgroupLimit;
    item.level = level;
    item.subject = c.path;
    item.cgroup = c.path;
    item.value = static_cast<double>(*held);
    item.limit = static_cast<double>(*c.limit_bytes);
    item.ratio = ratio;
    const std::uint64_t left = *c.limit_bytes > *held ? *c.limit_bytes - *held : 0;
    item.explanation = "cgroup " + c.path + " holds " + human_bytes(static_cast<double>(*held)) +
                       " that reclaim cannot free (anon, shmem, kernel memory; page cache left out) of its " +
                       human_bytes(static_cast<double>(*c.limit_bytes)) + " limit (" + percent(ratio) + "): " +
                       (left == 0 ? "its next allocation" : "growing by " + human_bytes(static_cast<double>(left))) +
                       " ends in an OOM kill inside it.";
    out.push_back(std::move(item));
  }
}

void allocator_item(const CanaryAllocatorStats& a, const BreakingSettings& settings, std::uint64_t recent_failures,
                    std::vector<BreakingItem>& out) {
  if (a.ceiling_bytes == 0) return;
  const double ratio = static_cast<double>(a.held_bytes) / static_cast<double>(a.ceiling_bytes);
  VerdictLevel level = level_reached(ratio, settings.allocator_ceiling_ratio);
  // Refused allocations: the ceiling was met and releasing free spans did not make room.
  if (recent_failures > 0) level = std::max(level, VerdictLevel::kHigh);
  if (level == VerdictLevel::kNone) return;
  BreakingItem item;
  item.kind = breaking_kind::kAllocatorCeiling;
  item.level = level;
  item.subject = "the canary's allocator";
  item.value = static_cast<double>(a.held_bytes);
  item.limit = static_cast<double>(a.ceiling_bytes);
  item.ratio = ratio;
  item.explanation = "the canary's allocator holds " + human_bytes(static_cast<double>(a.held_bytes)) + " of its " +
                     human_bytes(static_cast<double>(a.ceiling_bytes)) + " ceiling (" + percent(ratio) + ")";
  if (recent_failures > 0) {
    item.explanation += " and refused " + std::to_string(recent_failures) +
                        " allocations recently: at its ceiling it releases free spans first, then fails.";
  } else {
    item.explanation += ": near it, allocations make it release free spans, and then fail.";
  }
  out.push_back(std::move(item));
}

std::string kill_explanation(const OomKill& k) {
  std::string who = std::to_string(k.count) + (k.count == 1 ? " task" : " tasks");
  if (!k.victims.empty()) {
    const OomVictim& last = k.victims.back();
    who += std::string(k.count == 1 ? " (" : " (the last: ") + "pid " + std::to_string(last.pid) + " " + last.comm + ")";
  }
  std::string where = k.victim_cgroup.empty() ? std::string() : " in " + k.victim_cgroup;
  if (k.source != oom_killer::kKernel) {
    return std::string(k.source) + " killed " + who + where +
           " (it acts on memory pressure or swap before the kernel has to; its journal says why).";
  }
  if (k.scope.empty()) {
    return "the kernel's OOM killer killed " + who +
           (where.empty() ? " in a cgroup memdiag did not see (not exported, or created and removed between two "
                            "samples)"
                          : where + ", a cgroup memdiag did not see (not exported, or gone)") +
           "; the node was not short of memory, so a cgroup limit killed " + (k.count == 1 ? "it." : "them.");
  }
  std::string limit = k.scope_limit_bytes ? " " + human_bytes(static_cast<double>(*k.scope_limit_bytes)) : "";
  if (k.scope == "node") {
    return "the kernel's OOM killer killed " + who + (where.empty() ? " (cgroup unknown)" : where) +
           ": the node ran out of memory (a global OOM" + (limit.empty() ? "" : ", of" + limit + " RAM") + ").";
  }
  if (k.scope == k.victim_cgroup) {
    return "the kernel's OOM killer killed " + who + where + " at its own" + limit + " limit.";
  }
  return "the kernel's OOM killer killed " + who + where + " at the" + limit + " limit of " + k.scope +
         " (an ancestor).";
}

void oom_items(const std::vector<const OomKill*>& held, std::vector<BreakingItem>& out) {
  // One item per (scope, victim, killer), its kills summed over the window.
  std::map<std::tuple<std::string, std::string, std::string_view>, OomKill> summed;
  std::map<std::string, std::uint64_t> per_scope;
  for (const OomKill* held_kill : held) {
    const OomKill& k = *held_kill;
    auto [it, fresh] = summed.try_emplace({k.scope, k.victim_cgroup, k.source}, k);
    if (!fresh) {
      it->second.count += k.count;
      if (k.scope_limit_bytes) it->second.scope_limit_bytes = k.scope_limit_bytes;
      it->second.victims.insert(it->second.victims.end(), k.victims.begin(), k.victims.end());
    }
    per_scope[k.scope] += k.count;
  }
  for (const auto& [key, k] : summed) {
    BreakingItem item;
    item.kind = breaking_kind::kOomKill;
    item.level = per_scope[k.scope] >= kOomCrashLoopKills ? VerdictLevel::kCritical : VerdictLevel::kHigh;
    item.subject = k.scope.empty() ? "unknown" : k.scope;
    item.cgroup = k.victim_cgroup;
    if (!k.victims.empty()) {  // the last one killed
      item.pid = k.victims.back().pid;
      item.comm = k.victims.back().comm;
    }
    item.value = static_cast<double>(k.count);
    item.limit = k.scope_limit_bytes ? static_cast<double>(*k.scope_limit_bytes) : 0;
    item.source = k.source;
    item.counted_by = k.counted_by;
    item.explanation = kill_explanation(k);
    out.push_back(std::move(item));
  }
}

}  // namespace

void judge_walls(const Snapshot& current, const BreakingSettings& settings, std::vector<BreakingItem>& out) {
  if (current.processes) map_area_items(*current.processes, settings, out);
  if (current.cgroups) cgroup_limit_items(*current.cgroups, settings, out);
}

BreakingVerdict BreakingModel::assess(const Snapshot& current, const std::vector<SnapshotPtr>& ring) {
  if (ring.empty()) return assess(current, nullptr);
  // The oldest snapshot within the limit window, at least the previous one.
  const Snapshot* limit_start = ring.back().get();
  for (auto it = ring.rbegin(); it != ring.rend(); ++it) {
    if (current.taken_at - (*it)->taken_at > kLimitWindow) break;
    limit_start = it->get();
  }
  return assess(current, ring.back().get(), limit_start);
}

BreakingVerdict BreakingModel::assess(const Snapshot& current, const Snapshot* previous, const Snapshot* limit_start) {
  BreakingVerdict verdict;
  verdict.oom_window_seconds = std::chrono::duration<double>(settings_.oom_window).count();
  const auto window_start = current.taken_at - settings_.oom_window;
  if (previous) {
    for (OomKill& k : attribute_oom_kills(current, *previous, settings_.oom, limit_start)) {
      kills_.push_back({current.taken_at, std::move(k)});
    }
    if (current.canary && previous->canary) {
      const std::uint64_t now = current.canary->allocator.failed_allocations_total;
      const std::uint64_t before = previous->canary->allocator.failed_allocations_total;
      if (now > before) allocator_failures_.emplace_back(current.taken_at, now - before);
    }
  }
  while (!kills_.empty() && kills_.front().at <= window_start) kills_.pop_front();
  while (!allocator_failures_.empty() && allocator_failures_.front().first <= window_start) {
    allocator_failures_.pop_front();
  }

  std::vector<BreakingItem> items;
  judge_walls(current, settings_, items);
  if (current.canary) {
    std::uint64_t failures = 0;
    for (const auto& [at, n] : allocator_failures_) failures += n;
    allocator_item(current.canary->allocator, settings_, failures, items);
  }
  std::vector<const OomKill*> held;
  for (const Held& h : kills_) held.push_back(&h.kill);
  oom_items(held, items);

  std::stable_sort(items.begin(), items.end(), [](const BreakingItem& a, const BreakingItem& b) {
    if (a.level != b.level) return a.level > b.level;
    return a.ratio.value_or(0) > b.ratio.value_or(0);
  });
  for (const BreakingItem& item : items) verdict.level = std::max(verdict.level, item.level);
  if (items.size() > settings_.max_items) {
    verdict.dropped_items = items.size() - settings_.max_items;
    items.resize(settings_.max_items);
  }
  verdict.items = std::move(items);
  return verdict;
}

}  // namespace memdiag::analysis
