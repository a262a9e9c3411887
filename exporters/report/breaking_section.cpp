// SPDX-License-Identifier: Apache-2.0
#include "exporters/report/breaking_section.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include "probes/analysis/verdict_evidence.hpp"

namespace memdiag::report {

namespace {

using analysis::human_bytes;

std::string upper(std::string_view text) {
  std::string s(text);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

// A kill is the kernel's when no userspace killer claims it.
bool kernel_kill(const BreakingItem& item) { return item.source == oom_killer::kKernel; }

std::string map_areas_step(const BreakingItem& item) {
  std::string step = item.subject + " is at " + std::to_string(static_cast<std::uint64_t>(item.value)) + " of " +
                     std::to_string(static_cast<std::uint64_t>(item.limit)) +
                     " map areas: raise vm.max_map_count (sysctl -w vm.max_map_count=" +
                     std::to_string(static_cast<std::uint64_t>(item.limit) * 4) +
                     "; persist it in /etc/sysctl.d) or stop the allocator that fragments its mappings (munmap or "
                     "mprotect of pieces of larger mappings; glibc, jemalloc, mimalloc and tcmalloc stay bounded). "
                     "Its mappings: /proc/" +
                     std::to_string(item.pid.value_or(0)) + "/maps (one line each).";
  return step;
}

std::string cgroup_limit_step(const BreakingItem& item) {
  return "Raise the memory limit of " + item.subject +
         " (memory.max, or memory.limit_in_bytes on cgroup v1; for a pod, its resources.limits.memory) or shrink "
         "the job in it: " +
         human_bytes(item.value) + " of its " + human_bytes(item.limit) +
         " cannot be reclaimed, and the rest is all it has before an OOM kill.";
}

std::string oom_step(const BreakingItem& item) {
  const std::string victims = item.cgroup.empty() ? std::string("a cgroup memdiag did not see") : item.cgroup;
  const std::string n = std::to_string(static_cast<std::uint64_t>(item.value));
  if (!kernel_kill(item)) {
    return std::string(item.source) + " killed " + n + " task(s) in " + victims + ": journalctl -u " +
           (item.source == oom_killer::kSystemdOomd ? "systemd-oomd" : "oomd") +
           " says which pressure or swap rule fired; lower the job's memory or relax the rule (ManagedOOM* for "
           "systemd-oomd).";
  }
  std::string head = "The kernel OOM-killed " + n + " task(s) in " + victims;
  if (item.subject == "node") {
    return head + " because the node ran out of memory (a global OOM): stop or limit the largest jobs (the stall "
                  "verdict's contributors), add memory or swap. journalctl -k | grep -i 'out of memory' names the "
                  "victims and the memory they held.";
  }
  if (item.subject == "unknown") {
    return head + ": journalctl -k | grep -iA20 'invoked oom-killer' shows the cgroup (oom_memcg=) and the victim.";
  }
  return head + " at the " + (item.limit > 0 ? human_bytes(item.limit) + " " : std::string()) + "limit of " +
         item.subject +
         ": raise that limit or shrink what runs in it. journalctl -k | grep -i 'memory cgroup out of memory' names "
         "the victims.";
}

}  // namespace

void write_breaking_json(JsonWriter& w, const BreakingVerdict& v) {
  w.key("level");
  w.begin_object();
  w.field("name", to_string(v.level));
  w.field("value", static_cast<std::uint64_t>(v.level));
  w.end_object();
  w.field("oom_window_seconds", v.oom_window_seconds);
  w.key("items");
  w.begin_array();
  for (const BreakingItem& item : v.items) {
    w.begin_object();
    w.field("kind", item.kind);
    w.field("level", to_string(item.level));
    w.field("subject", item.subject);
    w.key("pid");
    if (item.pid) {
      w.integer(static_cast<std::uint64_t>(*item.pid));
    } else {
      w.null();
    }
    w.field("comm", item.comm);
    w.field("cgroup", item.cgroup);
    w.field("value", item.value);
    w.field("limit", item.limit);
    w.field("ratio", item.ratio);
    w.field("source", item.source);
    w.field("counted_by", item.counted_by);
    w.field("explanation", item.explanation);
    w.end_object();
  }
  w.end_array();
  w.field("dropped_items", static_cast<std::uint64_t>(v.dropped_items));
}

std::vector<std::string> breaking_text(const BreakingVerdict& v) {
  std::vector<std::string> out;
  out.push_back("ABOUT TO BREAK: " + upper(to_string(v.level)));
  for (const BreakingItem& item : v.items) {
    out.push_back(std::string(to_string(item.level)) + ", " + std::string(item.kind) + ": " + item.explanation);
  }
  if (v.dropped_items > 0) out.push_back("(" + std::to_string(v.dropped_items) + " more at lower levels)");
  return out;
}

std::vector<std::string> breaking_steps(const BreakingVerdict& v) {
  std::vector<std::string> out;
  std::set<std::pair<std::string_view, std::string>> seen;
  for (const BreakingItem& item : v.items) {
    if (item.level < VerdictLevel::kMedium && item.kind != breaking_kind::kOomKill) continue;
    if (!seen.insert({item.kind, item.subject + "|" + item.cgroup}).second) continue;
    if (item.kind == breaking_kind::kMapAreas) out.push_back(map_areas_step(item));
    if (item.kind == breaking_kind::kCgroupLimit) out.push_back(cgroup_limit_step(item));
    if (item.kind == breaking_kind::kOomKill) out.push_back(oom_step(item));
    if (item.kind == breaking_kind::kAllocatorCeiling) {
      out.push_back("The canary's allocator is near its ceiling (sources.canary.ceiling_bytes): raise the ceiling "
                    "or lower working_set_bytes; memdiag_allocator_held_bytes shows what it retains.");
    }
  }
  return out;
}

}  // namespace memdiag::report
