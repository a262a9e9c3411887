// SPDX-License-Identifier: Apache-2.0
#include "probes/analysis/process_members.hpp"

#include <algorithm>

namespace memdiag::analysis {

namespace {

bool within(std::string_view process_cgroup, std::string_view scope) {
  if (scope.empty()) return true;  // the node
  if (process_cgroup.empty()) return false;
  if (scope == "/") return true;
  return process_cgroup.size() >= scope.size() && process_cgroup.substr(0, scope.size()) == scope &&
         (process_cgroup.size() == scope.size() || process_cgroup[scope.size()] == '/');
}

}  // namespace

std::uint64_t process_footprint_bytes(const SelectedProcess& p) { return p.rss_anon_bytes + p.rss_shmem_bytes; }

namespace {

MemberProcess member_of(const SelectedProcess& p) {
  // A MAP_NORESERVE reservation is no promise (it is never charged): it weighs nothing.
  return {p.pid,         p.comm,       p.cgroup, process_footprint_bytes(p), p.rss_anon_bytes,
          p.swap_bytes, p.uncharged_reservation ? 0 : p.unbacked_promise_bytes};
}

}  // namespace

ProcessScan scan_of(const ProcessSection& processes) {
  ProcessScan scan{processes.scanned_at, {}};
  scan.processes.reserve(processes.selected.size());
  for (const SelectedProcess& p : processes.selected) scan.processes.push_back(member_of(p));
  return scan;
}

ProcessScan scan_of(const ProcessMemorySection& processes, std::chrono::system_clock::time_point taken_at) {
  ProcessScan scan{taken_at, {}};
  scan.processes.reserve(processes.processes.size());
  for (const ProcessMemory& p : processes.processes) {
    const std::uint64_t private_bytes = p.committed_private_bytes.value_or(0);
    const std::uint64_t footprint = private_bytes > 0 ? private_bytes : p.resident_bytes;
    scan.processes.push_back({p.pid, p.name, {}, footprint, footprint, 0, p.unbacked_promise_bytes.value_or(0)});
  }
  return scan;
}

std::optional<ProcessScan> process_scan(const Snapshot& snapshot) {
  if (snapshot.processes) return scan_of(*snapshot.processes);
  if (snapshot.process_memory) return scan_of(*snapshot.process_memory, snapshot.taken_at);
  return std::nullopt;
}

void ProcessGrowthTracker::update(const ProcessSection* processes, std::chrono::milliseconds half_life) {
  if (!processes) {
    update(static_cast<const ProcessScan*>(nullptr), half_life);
    return;
  }
  const ProcessScan scan = scan_of(*processes);
  update(&scan, half_life);
}

void ProcessGrowthTracker::update(const ProcessScan* scan, std::chrono::milliseconds half_life) {
  if (!scan) {
    by_pid_.clear();
    return;
  }
  if (scans_ > 0 && scan->scanned_at == last_scan_) return;  // the same scan again
  if (scans_ > 0 && scan->scanned_at < last_scan_) by_pid_.clear();  // the clock stepped back
  last_scan_ = scan->scanned_at;
  ++scans_;
  for (const MemberProcess& p : scan->processes) {
    Entry& e = by_pid_[p.pid];
    if (e.scans > 0 && e.comm != p.comm) e = Entry{};  // the pid was reused
    if (e.scans == 0) e.comm = p.comm;
    e.ema.update(scan->scanned_at, p.footprint_bytes, half_life);
    ++e.scans;
    e.scan = scans_;
  }
  std::erase_if(by_pid_, [&](const auto& entry) { return entry.second.scan != scans_; });
}

std::optional<double> ProcessGrowthTracker::growth(const MemberProcess& process) const {
  const auto it = by_pid_.find(process.pid);
  if (it == by_pid_.end() || it->second.scans < 2 || it->second.comm != process.comm) return std::nullopt;
  return it->second.ema.bytes_per_second();
}

std::optional<double> ProcessGrowthTracker::growth(const SelectedProcess& process) const {
  return growth(member_of(process));
}

std::vector<ScopeProcess> rank_processes(const ProcessSection& processes, const ScopeTotals& scope,
                                         VerdictLevel scope_level, const ProcessGrowthTracker& growth,
                                         const RoleSettings& roles) {
  return rank_processes(scan_of(processes), scope, scope_level, growth, roles);
}

std::vector<ScopeProcess> rank_processes(const ProcessScan& scan, const ScopeTotals& scope, VerdictLevel scope_level,
                                         const ProcessGrowthTracker& growth, const RoleSettings& roles) {
  std::vector<ScopeProcess> ranked;
  if (scope_level == VerdictLevel::kNone || !scope.whole.short_of_memory) return ranked;
  std::vector<const MemberProcess*> in_scope;
  // The scope's totals, or the selected processes' own sums where those are larger (a scope
  // total read at another moment than the scan, or unknown).
  double held = static_cast<double>(scope.whole.footprint_bytes);
  double grown = std::max(0.0, scope.whole.growth_bytes_per_second);
  double promised = static_cast<double>(scope.whole.unbacked_promise_bytes);
  double held_sum = 0, grown_sum = 0, promised_sum = 0;
  for (const MemberProcess& p : scan.processes) {
    if (!within(p.cgroup, scope.cgroup)) continue;
    in_scope.push_back(&p);
    held_sum += static_cast<double>(p.footprint_bytes);
    grown_sum += std::max(0.0, growth.growth(p).value_or(0));
    promised_sum += static_cast<double>(p.unbacked_promise_bytes);
  }
  held = std::max(held, held_sum);
  grown = std::max(grown, grown_sum);
  promised = std::max(promised, promised_sum);
  std::vector<ScopeProcess> all;
  std::vector<Candidate> candidates;
  for (const MemberProcess* p : in_scope) {
    const std::uint64_t footprint = p->footprint_bytes;
    const std::optional<double> grows = growth.growth(*p);
    PressureShares shares;
    if (held > 0) shares.held = static_cast<double>(footprint) / held;
    if (grown > 0) shares.growth = std::max(0.0, grows.value_or(0)) / grown;
    if (promised > 0) shares.promise = static_cast<double>(p->unbacked_promise_bytes) / promised;
    ScopeProcess out;
    out.pid = p->pid;
    out.comm = std::string(p->comm);
    out.cgroup = std::string(p->cgroup);
    out.contribution_ratio = contribution_ratio(shares, roles);
    out.footprint_bytes = footprint;
    out.growth_bytes_per_second = grows;
    out.relief_bytes = p->relief_bytes;
    out.relief_swap_bytes = p->swap_bytes;
    out.unbacked_promise_bytes = p->unbacked_promise_bytes;
    candidates.push_back(candidate(out.relief_bytes, grows.value_or(0),
                                   sizeable(footprint, grows.value_or(0), scope.whole.size_bytes, roles), roles));
    all.push_back(std::move(out));
  }
  const Cover cover = covering_set(candidates, scope.whole.shortfall_bytes, roles.max_members, roles.similar_ratio);
  for (std::size_t i : cover.taken) ranked.push_back(std::move(all[i]));
  return ranked;
}

}  // namespace memdiag::analysis
