#include "probes/analysis/diagnosis_model.hpp"

#include <algorithm>
#include <utility>

#include "probes/analysis/derive_figures.hpp"
#include "probes/analysis/verdict_evidence.hpp"

namespace memdiag::analysis {

namespace {

std::string_view parent_path(std::string_view path) {
  if (path.size() <= 1) return {};
  const std::size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return {};
  return slash == 0 ? std::string_view("/") : path.substr(0, slash);
}

MemberFigures member_of(const CgroupFigures& f) {
  MemberFigures m;
  m.cgroup = f.sample->path;
  m.footprint_bytes = f.footprint_bytes;
  m.growth_bytes_per_second = f.growth_bytes_per_second;
  m.relief_bytes = f.relief_bytes;
  m.stall_ratio = f.stall_ratio();
  m.refault_ratio = f.stall.refault_ratio;
  m.unbacked_promise_bytes = f.unbacked_promise_bytes;
  return m;
}

// The node's memory as its scope measures it (see assess).
struct NodeSupply {
  std::uint64_t size_bytes = 0;
  std::uint64_t available_bytes = 0;
  std::optional<std::uint64_t> footprint_bytes;  // what the node's processes hold, as one number
};

NodeSupply node_supply(const Snapshot& current) {
  NodeSupply n;
  if (!current.system_memory) return n;
  const SystemMemory& m = *current.system_memory;
  if (current.windows_memory && m.commit_limit_bytes && m.commit_charge_bytes && *m.commit_limit_bytes > 0) {
    n.size_bytes = *m.commit_limit_bytes;
    n.available_bytes = *m.commit_limit_bytes - std::min(*m.commit_charge_bytes, *m.commit_limit_bytes);
    n.footprint_bytes = m.commit_charge_bytes;
    return n;
  }
  if (m.physical_total_bytes == 0) return n;
  n.size_bytes = m.physical_total_bytes;
  n.available_bytes = m.physical_available_bytes;
  n.footprint_bytes = m.commit_backed_bytes;
  return n;
}

const CanaryReading* canary_in(const Snapshot& current, std::string_view cgroup) {
  if (!current.canary) return nullptr;
  for (const CgroupCanaryReading& c : current.canary->cgroups) {
    if (c.cgroup == cgroup) return &c.reading;
  }
  return nullptr;
}

}  // namespace

DiagnosisModel::DiagnosisModel(const DiagnosisSettings& settings)
    : settings_(settings),
      node_model_(settings.stall),
      breaking_model_(settings.breaking),
      timeline_(std::make_shared<std::vector<VerdictTransition>>()) {}

void DiagnosisModel::set_settings(const DiagnosisSettings& settings) {
  if (settings == settings_) return;
  if (!(settings.stall == settings_.stall) || !(settings.roles == settings_.roles) ||
      !(settings.forecast == settings_.forecast)) {
    node_model_ = StallModel(settings.stall);
    node_trend_ = {};
    promise_trend_ = {};
    cgroup_figures_ = {};
    process_growth_ = {};
    node_growth_ = {};
    for (auto& [path, state] : scopes_) {
      state.hold = {};
      state.trend = {};
      state.faults = {};
    }
  }
  breaking_model_.set_settings(settings.breaking);
  settings_ = settings;
}

void DiagnosisModel::note_transition(std::vector<VerdictTransition>& out, const Snapshot& current, std::string scope,
                                     VerdictLevel& logged, const StallVerdict& verdict, const ScopeAnalysis& analysis) {
  if (verdict.level == logged) return;
  out.push_back(VerdictTransition{current.taken_at, std::move(scope), logged, verdict.level,
                                  describe_evidence(verdict, &analysis)});
  logged = verdict.level;
}

std::vector<VerdictTransition> DiagnosisModel::assess(Snapshot& current, const std::vector<SnapshotPtr>& ring) {
  ++samples_;
  std::vector<VerdictTransition> transitions;
  derive_figures(current, settings_.overcommit);
  DerivedFigures& derived = current.derived;
  derived.stall = node_model_.assess(current, ring);
  derived.breaking = breaking_model_.assess(current, ring);

  const std::vector<CgroupFigures> figures =
      cgroup_figures_.compute(current, ring, settings_.stall, settings_.roles.growth_half_life);
  const std::optional<ProcessScan> scan = process_scan(current);
  process_growth_.update(scan ? &*scan : nullptr, settings_.roles.growth_half_life);

  // Cgroup scopes: every cgroup with a limit. Members are its children among the exported ones.
  std::unordered_map<std::string_view, std::size_t> scope_at;  // path -> index in cgroup_scopes
  std::vector<std::vector<MemberFigures>> scope_members;
  std::vector<const CgroupFigures*> scope_figures;  // each scope's own
  for (const CgroupFigures& f : figures) {
    if (!f.size_bytes) continue;
    CgroupScope scope;
    scope.cgroup = f.sample->path;
    scope.stall.figures = f.stall;
    scope.stall.signals = f.signals;
    ScopeState& state = scopes_[scope.cgroup];
    state.seen = samples_;
    // A canary running in this very cgroup (canary.cgroups) times its faults within the
    // scope's limit and reclaim: slow_faults for the scope, against the canary's own calm
    // baseline, as the daemon's canary is for the node.
    if (const CanaryReading* canary = canary_in(current, scope.cgroup)) {
      scope.stall.signals.push_back(stall_signal::kCanary);
      const bool calm = !waiting_noticeably(scope.stall.figures, settings_.stall).value_or(false);
      scope.stall.figures.fault_latency_ratio = state.faults.update(*canary, current.taken_at, calm);
    }
    judge_stall(scope.stall, settings_.stall);
    scope.stall.level = state.hold.update(current.taken_at, scope.stall.instant_level, settings_.stall.hold);
    scope.analysis.available_bytes = f.available_bytes;
    scope.analysis.shortfall_bytes = shortfall_bytes(*f.size_bytes, *f.available_bytes, settings_.roles);
    scope.analysis.exhaustion_seconds = state.trend.add(current.taken_at, static_cast<double>(*f.available_bytes),
                                                        static_cast<double>(*f.size_bytes), settings_.forecast);
    scope_at.emplace(f.sample->path, derived.cgroup_scopes.size());
    derived.cgroup_scopes.push_back(std::move(scope));
    scope_members.emplace_back();
    scope_figures.push_back(&f);
  }
  std::vector<MemberFigures> node_members;
  for (const CgroupFigures& f : figures) {
    if (f.sample->leaf && f.sample->path != "/") node_members.push_back(member_of(f));
    if (const auto it = scope_at.find(parent_path(f.sample->path)); it != scope_at.end()) {
      scope_members[it->second].push_back(member_of(f));
    }
  }
  for (std::size_t i = 0; i < derived.cgroup_scopes.size(); ++i) {
    CgroupScope& scope = derived.cgroup_scopes[i];
    const CgroupFigures& own = *scope_figures[i];
    scope.analysis.members =
        rank_members(scope_members[i], scope.stall.level, *own.size_bytes, settings_.roles, settings_.stall);
    if (scan) {
      const ScopeTotals totals{scope.cgroup, own.footprint_bytes, own.growth_bytes_per_second,
                               own.unbacked_promise_bytes.value_or(0), *own.size_bytes};
      scope.analysis.processes = rank_processes(*scan, totals, scope.stall.level, process_growth_, settings_.roles);
    }
    note_transition(transitions, current, scope.cgroup, scopes_[scope.cgroup].logged, scope.stall, scope.analysis);
  }
  // A scope that is gone (its cgroup removed, its limit lifted, or no longer exported) ends its
  // story in the timeline and the log, instead of seeming to stall on forever.
  std::erase_if(scopes_, [&](const auto& entry) {
    if (entry.second.seen == samples_) return false;
    if (entry.second.logged != VerdictLevel::kNone) {
      transitions.push_back(VerdictTransition{current.taken_at, entry.first, entry.second.logged, VerdictLevel::kNone,
                                              "gone: the cgroup was removed, lost its limit or is no longer exported"});
    }
    return true;
  });

  // The node as a scope. Its size and what is left: physical memory and MemAvailable on Linux;
  // on Windows the commit limit and the commit headroom (limit less charge), what the kubelet
  // takes as memory.available there, since a commit past the limit fails outright.
  ScopeAnalysis node;
  const NodeSupply supply = node_supply(current);
  if (supply.size_bytes > 0) {
    node.available_bytes = supply.available_bytes;
    node.shortfall_bytes = shortfall_bytes(supply.size_bytes, supply.available_bytes, settings_.roles);
    node.exhaustion_seconds = node_trend_.add(current.taken_at, static_cast<double>(supply.available_bytes),
                                              static_cast<double>(supply.size_bytes), settings_.forecast);
  }
  node.members = rank_members(node_members, derived.stall->level, supply.size_bytes, settings_.roles, settings_.stall);
  ScopeTotals node_totals;
  node_totals.size_bytes = supply.size_bytes;
  if (supply.footprint_bytes) {
    node_totals.footprint_bytes = *supply.footprint_bytes;
    node_totals.growth_bytes_per_second =
        node_growth_.update(current.taken_at, node_totals.footprint_bytes, settings_.roles.growth_half_life);
  }
  if (scan) {
    if (current.processes) node_totals.unbacked_promise_bytes = current.processes->unbacked_promise_bytes;
    node.processes = rank_processes(*scan, node_totals, derived.stall->level, process_growth_, settings_.roles);
  }
  note_transition(transitions, current, "node", node_logged_, *derived.stall, node);
  derived.node_scope = std::move(node);

  // The promises coming due: the unbacked promise's own trend to zero gives its drawdown rate
  // (unbacked / seconds to zero); at that rate the supply lasts supply / rate, which matters
  // only when there is more promised than supply (else every promise can be paid).
  if (derived.overcommit && derived.overcommit->unbacked_bytes && current.system_memory) {
    OvercommitVerdict& o = *derived.overcommit;
    const double unbacked = static_cast<double>(*o.unbacked_bytes);
    const auto to_zero = promise_trend_.add(current.taken_at, unbacked,
                                            static_cast<double>(current.system_memory->physical_total_bytes),
                                            settings_.forecast);
    const double supply = static_cast<double>(o.supply_bytes);
    if (to_zero && *to_zero > 0 && unbacked > supply) {
      const double seconds = supply * *to_zero / unbacked;
      if (seconds <= std::chrono::duration<double>(settings_.forecast.horizon).count()) {
        o.promise_exhaustion_seconds = seconds;
      }
    }
  }

  if (!transitions.empty()) {
    auto timeline = std::make_shared<std::vector<VerdictTransition>>(*timeline_);
    for (const VerdictTransition& t : transitions) timeline->push_back(t);
    if (timeline->size() > kTimelineLength) {
      timeline->erase(timeline->begin(), timeline->end() - static_cast<std::ptrdiff_t>(kTimelineLength));
    }
    timeline_ = std::move(timeline);
  }
  derived.timeline = timeline_;
  return transitions;
}

}  // namespace memdiag::analysis
