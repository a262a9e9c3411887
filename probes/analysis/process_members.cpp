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

std::uint64_t process_footprint_bytes(const SelectedProcess& p) {
  return p.rss_anon_bytes + p.rss_shmem_bytes + p.swap_bytes;
}

void ProcessGrowthTracker::update(const ProcessSection* processes, std::chrono::milliseconds half_life) {
  if (!processes) {
    by_pid_.clear();
    return;
  }
  if (scans_ > 0 && processes->scanned_at == last_scan_) return;  // the same scan again
  if (scans_ > 0 && processes->scanned_at < last_scan_) by_pid_.clear();  // the clock stepped back
  last_scan_ = processes->scanned_at;
  ++scans_;
  for (const SelectedProcess& p : processes->selected) {
    Entry& e = by_pid_[p.pid];
    if (e.scans > 0 && e.comm != p.comm) e = Entry{};  // the pid was reused
    if (e.scans == 0) e.comm = p.comm;
    e.ema.update(processes->scanned_at, process_footprint_bytes(p), half_life);
    ++e.scans;
    e.scan = scans_;
  }
  std::erase_if(by_pid_, [&](const auto& entry) { return entry.second.scan != scans_; });
}

std::optional<double> ProcessGrowthTracker::growth(const SelectedProcess& process) const {
  const auto it = by_pid_.find(process.pid);
  if (it == by_pid_.end() || it->second.scans < 2 || it->second.comm != process.comm) return std::nullopt;
  return it->second.ema.bytes_per_second();
}

std::vector<ScopeProcess> rank_processes(const ProcessSection& processes, const ScopeTotals& scope,
                                         VerdictLevel scope_level, const ProcessGrowthTracker& growth,
                                         const RoleSettings& roles) {
  std::vector<ScopeProcess> ranked;
  if (scope_level == VerdictLevel::kNone) return ranked;
  std::vector<const SelectedProcess*> in_scope;
  // The scope's totals, or the selected processes' own sums where those are larger (a scope
  // total read at another moment than the scan, or unknown).
  double held = static_cast<double>(scope.footprint_bytes);
  double grown = std::max(0.0, scope.growth_bytes_per_second);
  double promised = static_cast<double>(scope.unbacked_promise_bytes);
  double held_sum = 0, grown_sum = 0, promised_sum = 0;
  for (const SelectedProcess& p : processes.selected) {
    if (!within(p.cgroup, scope.cgroup)) continue;
    in_scope.push_back(&p);
    held_sum += static_cast<double>(process_footprint_bytes(p));
    grown_sum += std::max(0.0, growth.growth(p).value_or(0));
    promised_sum += static_cast<double>(p.unbacked_promise_bytes);
  }
  held = std::max(held, held_sum);
  grown = std::max(grown, grown_sum);
  promised = std::max(promised, promised_sum);
  for (const SelectedProcess* p : in_scope) {
    const std::uint64_t footprint = process_footprint_bytes(*p);
    const std::optional<double> grows = growth.growth(*p);
    PressureShares shares;
    if (held > 0) shares.held = static_cast<double>(footprint) / held;
    if (grown > 0) shares.growth = std::max(0.0, grows.value_or(0)) / grown;
    if (promised > 0) shares.promise = static_cast<double>(p->unbacked_promise_bytes) / promised;
    if (!contributes(shares, footprint, grows.value_or(0), scope.size_bytes, roles)) continue;
    ScopeProcess out;
    out.pid = p->pid;
    out.comm = p->comm;
    out.cgroup = p->cgroup;
    out.contribution_ratio = contribution_ratio(shares, roles);
    out.footprint_bytes = footprint;
    out.growth_bytes_per_second = grows;
    out.relief_bytes = p->rss_anon_bytes + p->swap_bytes;
    out.unbacked_promise_bytes = p->unbacked_promise_bytes;
    ranked.push_back(std::move(out));
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const ScopeProcess& a, const ScopeProcess& b) {
    return a.contribution_ratio > b.contribution_ratio;
  });
  if (ranked.size() > roles.max_members) ranked.resize(roles.max_members);
  return ranked;
}

}  // namespace memdiag::analysis
