// SPDX-License-Identifier: Apache-2.0
#include "exporters/report/next_steps.hpp"

#include <algorithm>
#include <cstdio>

#include "exporters/report/breaking_section.hpp"
#include "probes/analysis/verdict_evidence.hpp"

namespace memdiag::report {

namespace {

using analysis::human_bytes;

bool has_reason(const std::vector<VerdictReason>& reasons, std::string_view code) {
  return std::any_of(reasons.begin(), reasons.end(), [&](const VerdictReason& r) { return r.code == code; });
}

std::string bytes(std::uint64_t b) { return human_bytes(static_cast<double>(b)); }

// Advice for one stalling scope: its contributors, and the traces that name the cause.
void scope_steps(std::vector<std::string>& out, std::string_view scope, const StallVerdict& stall,
                 const ScopeAnalysis& analysis, bool cgroup) {
  if (stall.level == VerdictLevel::kNone) return;
  const std::string where = cgroup ? "cgroup " + std::string(scope) : std::string("the node");
  if (!analysis.short_of_memory && !analysis.easing) {
    // Not its stall: the cgroups at their limits have steps of their own. (Easing, the steps are
    // those of the moment that set the level, short then.)
    if (!cgroup && analysis.cgroups_at_limit > 0) {
      out.push_back("The node is not short of memory: " + std::to_string(analysis.cgroups_at_limit) +
                    " cgroup(s) stall at their own limits; see their steps, nothing node-wide needs stopping.");
    }
    return;
  }
  std::vector<const ScopeMember*> contributors;
  for (const ScopeMember& m : analysis.members) {
    if (m.role == PressureRole::kContributor) contributors.push_back(&m);
  }
  const auto covers_text = [&](std::uint64_t relief) {
    if (!analysis.shortfall_bytes || *analysis.shortfall_bytes == 0) return std::string();
    return (relief >= *analysis.shortfall_bytes ? ", which covers " : ", short of ") + where + "'s shortfall of " +
           bytes(*analysis.shortfall_bytes);
  };
  // Said only where there are members to compare with: in a cgroup with no child cgroups all
  // of it is its own processes', which the processes below name.
  if (analysis.unattributed_contributes && analysis.unattributed_bytes && analysis.footprint_bytes &&
      *analysis.unattributed_bytes < *analysis.footprint_bytes) {
    out.push_back("Much of what presses on " + where + " is held outside its member cgroups: " +
                  bytes(*analysis.unattributed_bytes) +
                  " in its own processes, cgroups not exported, or tmpfs files no process maps; the processes below "
                  "name who holds it.");
  }
  if (!contributors.empty()) {
    const ScopeMember& m = *contributors.front();
    std::string step = "Stop or limit " + m.cgroup + " (holds " + bytes(m.footprint_bytes) + " resident";
    if (m.growth_bytes_per_second > 0) step += ", growing " + human_bytes(m.growth_bytes_per_second) + "/s";
    step += "): stopping it frees about " + bytes(m.relief_bytes) + " of RAM";
    if (contributors.size() == 1) step += covers_text(m.relief_bytes);
    out.push_back(step + ".");
    if (contributors.size() > 1) {
      std::uint64_t together = 0;
      std::string names;
      for (std::size_t i = 0; i < contributors.size(); ++i) {
        together += contributors[i]->relief_bytes;
        names += (i == 0 ? "" : i + 1 == contributors.size() ? " and " : ", ") + contributors[i]->cgroup;
      }
      out.push_back("Stopping " + names + " together frees about " + bytes(together) + " of RAM" +
                    covers_text(together) + ".");
    }
    if (analysis.similar_members > 0) {
      out.push_back(std::to_string(analysis.similar_members) +
                    " similar member(s) hold about as much: stopping any of them instead frees about as much.");
    }
  }
  if (!analysis.processes.empty()) {
    const ScopeProcess& p = analysis.processes.front();
    std::string step = "The process pressing most on " + where + ": pid " + std::to_string(p.pid) + " (" + p.comm +
                       (p.cgroup.empty() ? "" : ", in " + p.cgroup) + ") holds " + bytes(p.footprint_bytes) +
                       " resident";
    if (p.growth_bytes_per_second && *p.growth_bytes_per_second > 0) {
      step += ", growing " + human_bytes(*p.growth_bytes_per_second) + "/s";
    }
    out.push_back(step + "; stopping it frees about " + bytes(p.relief_bytes) + " of RAM.");
  }
  if (cgroup) {
    out.push_back((analysis.easing ? "The pressure eased; if it comes back: raise the memory limit of "
                                   : "Raise the memory limit of ") +
                  std::string(scope) +
                  " (memory.max, or memory.limit_in_bytes on cgroup v1; for a pod, its resources.limits.memory) or "
                  "lower what runs in it: it " + (analysis.easing ? "was" : "is") + " short of memory at its own limit.");
  }
  if (has_reason(stall.reasons, stall_reason::kDirectReclaim)) {
    out.push_back("See which tasks reclaim directly: bpftrace -e 'tracepoint:vmscan:mm_vmscan_direct_reclaim_begin "
                  "{ @[comm, cgroup] = count(); }'");
  }
  if (has_reason(stall.reasons, stall_reason::kMemcgLimit)) {
    out.push_back("See which cgroups reclaim at their limits: bpftrace -e "
                  "'tracepoint:vmscan:mm_vmscan_memcg_reclaim_begin { @[cgroup] = count(); }'");
  }
  if (has_reason(stall.reasons, stall_reason::kThrashing)) {
    out.push_back("The page cache of " + where +
                  " is evicted and read back (thrashing): its working set does not fit; give it memory or stop a "
                  "contributor. Refaults per cgroup: workingset_refault_file in memory.stat.");
  }
  if (has_reason(stall.reasons, stall_reason::kCompaction)) {
    out.push_back("Allocations wait for compaction: check /proc/buddyinfo for high-order free pages and "
                  "/sys/kernel/mm/transparent_hugepage/defrag (\"defer+madvise\" avoids direct compaction).");
  }
  if (has_reason(stall.reasons, stall_reason::kOomKill)) {
    out.push_back("The kernel killed a task for memory: journalctl -k | grep -i 'out of memory' names it.");
  }
  if (has_reason(stall.reasons, stall_reason::kSwapExhausted)) {
    out.push_back("Swap is all but gone: what it held comes back as faults and OOM kills; add swap or stop a "
                  "contributor.");
  }
  if (has_reason(stall.reasons, stall_reason::kHardFaults)) {
    out.push_back("Programs wait for their own pages to come back from disk (hard faults): trimmed working sets "
                  "and paged-out memory. Which processes fault: Resource Monitor's Memory tab (Hard Faults/sec), or "
                  "Get-Counter '\\Process(*)\\Page Faults/sec'.");
  }
  if (has_reason(stall.reasons, stall_reason::kLowMemory)) {
    out.push_back("Windows says available memory is low (its low-memory notification): it trims working sets "
                  "to make room; stop or shrink the process with the largest private bytes, or add memory.");
  }
}

}  // namespace

std::string overcommit_mode_meaning(OvercommitMode mode, bool windows) {
  if (windows) {
    return "Windows enforces its commit limit (RAM plus page files): the commit charge may not pass it; beyond it "
           "allocations fail (and with system-managed page files Windows first grows them, slowly), while memory "
           "itself may still be free.";
  }
  switch (mode) {
    case OvercommitMode::kHeuristic:
      return "vm.overcommit_memory=0 (heuristic): only requests larger than RAM + swap are refused; everything else "
             "is promised, and promises that come due beyond what the node has end in reclaim and OOM kills.";
    case OvercommitMode::kAlways:
      return "vm.overcommit_memory=1 (always): no request is ever refused; every promise beyond what the node has "
             "comes due as direct reclaim and OOM kills, never as an allocation error a program could handle.";
    case OvercommitMode::kNever:
      return "vm.overcommit_memory=2 (never): the commit charge may not pass CommitLimit; beyond it allocations fail "
             "with ENOMEM, while memory itself may still be free.";
  }
  return "";
}

std::vector<std::string> next_steps(const Snapshot& snapshot) {
  std::vector<std::string> out;
  const DerivedFigures& d = snapshot.derived;
  if (d.breaking) {  // what is about to break, or broke, first: it fails whatever the stall
    for (std::string& step : breaking_steps(*d.breaking)) out.push_back(std::move(step));
  }
  for (const CgroupScope& scope : d.cgroup_scopes) scope_steps(out, scope.cgroup, scope.stall, scope.analysis, true);
  if (d.stall && d.node_scope) scope_steps(out, "node", *d.stall, *d.node_scope, false);
  if (d.overcommit) {
    const OvercommitVerdict& o = *d.overcommit;
    // The holder to name: the cgroup holding the most promise that can come due on the node.
    // Not one whose promise its limits cap (listed below as its own risk), nor MAP_NORESERVE
    // reservations (the scan leaves them out of the cgroup sums).
    auto capped = [&o](const std::string& cgroup) {
      for (const CgroupOverLimit& c : o.cgroups_over_limit) {
        if (cgroup == c.cgroup || (cgroup.size() > c.cgroup.size() && cgroup.compare(0, c.cgroup.size(), c.cgroup) == 0 &&
                                   (c.cgroup == "/" || cgroup[c.cgroup.size()] == '/'))) {
          return true;
        }
      }
      return false;
    };
    std::string holder;
    const CgroupProcessTotals* top = nullptr;
    if (snapshot.processes) {
      for (const CgroupProcessTotals& c : snapshot.processes->cgroups) {
        if (c.unbacked_promise_bytes == 0 || capped(c.cgroup)) continue;
        if (top == nullptr || c.unbacked_promise_bytes > top->unbacked_promise_bytes) top = &c;
      }
    }
    if (top != nullptr) holder = top->cgroup + " holds the most (" + bytes(top->unbacked_promise_bytes) + ")";
    if (has_reason(o.reasons, overcommit_reason::kUnbackedPromises) && o.level >= VerdictLevel::kMedium) {
      std::string step = "More is promised than the node can supply";
      if (o.charged_unbacked_bytes) {
        step += " (" + bytes(*o.charged_unbacked_bytes) + " unbacked that can come due against " +
                bytes(o.supply_bytes) + ")";
      }
      step += ": put memory limits on the jobs that promise most";
      if (!holder.empty()) step += "; " + holder;
      if (o.mode == OvercommitMode::kAlways) {
        step += "; with vm.overcommit_memory=0 the kernel would at least refuse the impossible requests";
      }
      out.push_back(step + ".");
    }
    if (has_reason(o.reasons, overcommit_reason::kCommitLimit)) {
      std::string step =
          snapshot.windows_memory
              ? "Allocations will fail at the commit limit: enlarge the page files (or let Windows manage them), "
                "add memory, or stop the process with the largest private bytes"
              : "Allocations will fail at CommitLimit: raise vm.overcommit_ratio (or vm.overcommit_kbytes), add "
                "swap, or stop a large promise holder";
      if (!holder.empty()) step += " (" + holder + ")";
      out.push_back(step + ".");
    }
    if (has_reason(o.reasons, overcommit_reason::kCgroupLimits) && o.cgroup_limit_overcommit_ratio) {
      char ratio[32];
      std::snprintf(ratio, sizeof ratio, "%.2f", *o.cgroup_limit_overcommit_ratio);
      out.push_back(std::string("The cgroups' memory limits, each capped subtree counted once, add up to ") + ratio +
                    "x physical memory: they cannot all be honoured at once; lower limits or schedule less here.");
    }
    if (!o.cgroups_over_limit.empty()) {
      // Each cgroup's own risk, whatever the node's level: its promise cannot come due on the
      // node, only at its own ceiling.
      std::string step;
      const std::size_t shown = std::min<std::size_t>(o.cgroups_over_limit.size(), 3);
      for (std::size_t i = 0; i < shown; ++i) {
        const CgroupOverLimit& c = o.cgroups_over_limit[i];
        if (!step.empty()) step += "; ";
        step += c.cgroup + " promised " + bytes(c.committed_private_bytes) + " against a limit of " +
                bytes(c.effective_limit_bytes) + " (" + bytes(c.unbacked_promise_bytes) + " of it not yet used)";
      }
      if (o.cgroups_over_limit_total > shown) {
        step += "; and " + std::to_string(o.cgroups_over_limit_total - shown) + " more cgroups";
      }
      out.push_back(step +
                    ": each will be OOM-killed at its ceiling if it touches its promise; raise its limit or make it "
                    "promise less (the node is not at risk from it).");
    }
  }
  return out;
}

}  // namespace memdiag::report
