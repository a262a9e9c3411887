// SPDX-License-Identifier: Apache-2.0
#include "probes/analysis/diagnosis_model.hpp"

#include <algorithm>
#include <utility>

#include "probes/analysis/derive_figures.hpp"
#include "probes/analysis/oom_attribution.hpp"
#include "probes/analysis/snapshot_window.hpp"
#include "probes/analysis/verdict_evidence.hpp"
#include "probes/core/cgroup_path.hpp"

namespace memdiag::analysis {

namespace {

std::size_t depth_of(std::string_view path) {
  return static_cast<std::size_t>(std::count(path.begin(), path.end(), '/'));
}

MemberFigures member_of(const CgroupFigures& f) {
  MemberFigures m;
  m.cgroup = f.sample->path;
  m.footprint_bytes = f.footprint_bytes;
  m.swap_bytes = f.swap_bytes;
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
  // What the node's processes hold, as one number: resident anon + shmem (Linux: AnonPages +
  // Shmem), or the commit charge (Windows).
  std::optional<std::uint64_t> footprint_bytes;
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
  if (current.meminfo) {
    const auto anon = current.meminfo->get("AnonPages");
    const auto shmem = current.meminfo->get("Shmem");
    if (anon && shmem) n.footprint_bytes = *anon + *shmem;
  }
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
    node_hold_ = {};
    node_peak_ = {};
    node_trend_ = {};
    promise_payment_ = {};
    cgroup_figures_ = {};
    process_growth_ = {};
    node_growth_ = {};
    for (auto& [path, state] : scopes_) {
      state.hold = {};
      state.trend = {};
      state.faults = {};
      state.peak = {};
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

void DiagnosisModel::settle_roles(StallVerdict& verdict, ScopeAnalysis& analysis, Evidence& peak,
                                  const std::vector<MemberFigures>& members, const ScopeWhole& whole,
                                  const std::optional<ProcessScan>& scan, std::string_view cgroup) {
  RankedMembers ranked = rank_members(members, verdict.level, whole, settings_.roles, settings_.stall);
  analysis.footprint_bytes = ranked.footprint_bytes;
  analysis.unattributed_bytes = ranked.unattributed_bytes;
  if (verdict.level == VerdictLevel::kNone) {
    peak = {};
    return;
  }
  // Easing: the level is held (by the hold, or the long window's share) while tasks no longer
  // wait now; what is said then is what set it. While they still wait, the roles are this
  // sample's, and they refresh the evidence kept: the highest level's reasons, the newest roles
  // (a process scan may name the cause a few samples after the level rose).
  const bool waiting_now = waiting_noticeably(verdict.figures, settings_.stall).value_or(true);
  if (!waiting_now) {
    if (peak.level != VerdictLevel::kNone) {
      analysis.easing = true;
      verdict.reasons = peak.reasons;
      analysis.members = peak.members;
      analysis.processes = peak.processes;
      analysis.similar_members = peak.similar_members;
      analysis.unattributed_contributes = peak.unattributed_contributes;
    }
    return;
  }
  analysis.members = std::move(ranked.members);
  analysis.similar_members = ranked.similar_members;
  analysis.unattributed_contributes = ranked.unattributed_contributes;
  if (scan) {
    analysis.processes =
        rank_processes(*scan, ScopeTotals{cgroup, whole}, verdict.level, process_growth_, settings_.roles);
  }
  if (verdict.instant_level >= peak.level && verdict.instant_level != VerdictLevel::kNone) {
    peak.level = verdict.instant_level;
    peak.reasons = verdict.reasons;
  }
  const auto names_someone = [](const std::vector<ScopeMember>& members, const std::vector<ScopeProcess>& processes) {
    return !processes.empty() || std::any_of(members.begin(), members.end(), [](const ScopeMember& m) {
             return m.role == PressureRole::kContributor;
           });
  };
  if (names_someone(analysis.members, analysis.processes)) {
    peak.members = analysis.members;
    peak.processes = analysis.processes;
    peak.similar_members = analysis.similar_members;
    peak.unattributed_contributes = analysis.unattributed_contributes;
  } else if (names_someone(peak.members, peak.processes)) {
    // The cause is gone (exited, OOM-killed) while the others still wait: it is still the cause.
    analysis.members = peak.members;
    analysis.processes = peak.processes;
    analysis.similar_members = peak.similar_members;
    analysis.unattributed_contributes = peak.unattributed_contributes;
  }
}

std::vector<VerdictTransition> DiagnosisModel::assess(Snapshot& current, const std::vector<SnapshotPtr>& ring) {
  ++samples_;
  std::vector<VerdictTransition> transitions;
  derive_figures(current, settings_.overcommit);
  DerivedFigures& derived = current.derived;
  derived.breaking = breaking_model_.assess(current, ring);

  const std::vector<CgroupFigures> figures =
      cgroup_figures_.compute(current, ring, settings_.stall, settings_.roles.growth_half_life);
  const std::optional<ProcessScan> scan = process_scan(current);
  process_growth_.update(scan ? &*scan : nullptr, settings_.roles.growth_half_life);

  // The kernel's OOM kills in the stall window, each charged to the scope whose limit caused it
  // (oom_attribution.hpp): the oom_kill reason is that scope's alone, not every ancestor's, and
  // on v1 a limited parent's kill counted in its child's counter is the parent's.
  std::unordered_map<std::string, double> kills_by_scope;
  if (const Snapshot* start = window_start(ring, current, settings_.stall.window)) {
    for (const OomKill& kill : attribute_oom_kills(current, *start, settings_.breaking.oom)) {
      if (kill.source == oom_killer::kKernel) kills_by_scope[kill.scope] += static_cast<double>(kill.count);
    }
  }
  const auto kills_in = [&](const std::string& scope) {
    const auto it = kills_by_scope.find(scope);
    return it == kills_by_scope.end() ? 0.0 : it->second;
  };

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
    if (scope.stall.figures.oom_kills) scope.stall.figures.oom_kills = kills_in(scope.cgroup);
    judge_stall(scope.stall, settings_.stall);
    scope.analysis.available_bytes = f.available_bytes;
    scope.analysis.shortfall_bytes = shortfall_bytes(*f.size_bytes, *f.available_bytes, settings_.roles);
    // Short: below its headroom, or its own limit was hit in the window (v1 failcnt counts the
    // limit that refused a charge; v2 memory.events max/high) or it OOM-killed.
    const StallFigures& sf = scope.stall.figures;
    scope.analysis.short_of_memory = *scope.analysis.shortfall_bytes > 0 ||
                                     (sf.limit_events_per_second && *sf.limit_events_per_second > 0) ||
                                     (sf.oom_kills && *sf.oom_kills > 0);
    // The forecast follows what cache cannot give back: reclaimable cache filling up is no
    // exhaustion.
    if (f.available_beyond_cache_bytes) {
      scope.analysis.exhaustion_seconds =
          state.trend.add(current.taken_at, static_cast<double>(*f.available_beyond_cache_bytes), settings_.forecast);
    }
    scope_at.emplace(f.sample->path, derived.cgroup_scopes.size());
    derived.cgroup_scopes.push_back(std::move(scope));
    scope_members.emplace_back();
    scope_figures.push_back(&f);
  }
  // Each stall stays with the innermost scope short of memory: deepest scopes first, each
  // judged and held, then telling its limited ancestors (and the node) that it stalls, held
  // level included: a stall easing in a cgroup still explains what its ancestors' PSI shows.
  std::vector<std::size_t> deepest_first(derived.cgroup_scopes.size());
  for (std::size_t i = 0; i < deepest_first.size(); ++i) deepest_first[i] = i;
  std::stable_sort(deepest_first.begin(), deepest_first.end(), [&](std::size_t a, std::size_t b) {
    return depth_of(derived.cgroup_scopes[a].cgroup) > depth_of(derived.cgroup_scopes[b].cgroup);
  });
  std::vector<std::size_t> inner_stalling(derived.cgroup_scopes.size(), 0);
  std::size_t cgroups_at_limit = 0;
  for (std::size_t i : deepest_first) {
    CgroupScope& scope = derived.cgroup_scopes[i];
    own_stall(scope.stall, scope.analysis.short_of_memory, inner_stalling[i]);
    scope.stall.level = scopes_[scope.cgroup].hold.update(current.taken_at, scope.stall.instant_level,
                                                          settings_.stall.hold);
    if (scope.stall.level == VerdictLevel::kNone) continue;
    ++cgroups_at_limit;
    for (auto at = parent_cgroup(scope.cgroup); !at.empty(); at = parent_cgroup(at)) {
      if (const auto it = scope_at.find(at); it != scope_at.end()) ++inner_stalling[it->second];
    }
  }
  std::vector<MemberFigures> node_members;
  for (const CgroupFigures& f : figures) {
    if (f.sample->leaf && f.sample->path != "/") node_members.push_back(member_of(f));
    if (const auto it = scope_at.find(parent_cgroup(f.sample->path)); it != scope_at.end()) {
      scope_members[it->second].push_back(member_of(f));
    }
  }
  for (std::size_t i = 0; i < derived.cgroup_scopes.size(); ++i) {
    CgroupScope& scope = derived.cgroup_scopes[i];
    ScopeState& state = scopes_[scope.cgroup];
    const CgroupFigures& own = *scope_figures[i];
    ScopeWhole whole;
    whole.footprint_bytes = own.footprint_bytes;
    whole.growth_bytes_per_second = own.growth_bytes_per_second;
    whole.unbacked_promise_bytes = own.unbacked_promise_bytes.value_or(0);
    whole.size_bytes = *own.size_bytes;
    whole.shortfall_bytes = scope.analysis.shortfall_bytes.value_or(0);
    whole.short_of_memory = scope.analysis.short_of_memory;
    settle_roles(scope.stall, scope.analysis, state.peak, scope_members[i], whole, scan, scope.cgroup);
    note_transition(transitions, current, scope.cgroup, state.logged, scope.stall, scope.analysis);
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
  StallVerdict stall = node_model_.assess_instant(current, ring);
  if (stall.figures.oom_kills && *stall.figures.oom_kills != kills_in("node")) {
    stall.figures.oom_kills = kills_in("node");
    judge_stall(stall, settings_.stall);
  }
  ScopeAnalysis node;
  const NodeSupply supply = node_supply(current);
  if (supply.size_bytes > 0) {
    node.available_bytes = supply.available_bytes;
    node.shortfall_bytes = shortfall_bytes(supply.size_bytes, supply.available_bytes, settings_.roles);
    node.exhaustion_seconds =
        node_trend_.add(current.taken_at, static_cast<double>(supply.available_bytes), settings_.forecast);
  }
  // The node is short when it has less than its headroom left or reclaims globally. Where it
  // cannot tell (no vmstat: Windows), its stall is its own.
  node.cgroups_at_limit = cgroups_at_limit;
  const std::optional<bool> reclaiming = node_model_.reclaiming_globally(stall.figures);
  node.short_of_memory = node.shortfall_bytes.value_or(0) > 0 || reclaiming.value_or(true);
  own_stall(stall, node.short_of_memory, cgroups_at_limit);
  stall.level = node_hold_.update(current.taken_at, stall.instant_level, settings_.stall.hold);
  ScopeWhole node_whole;
  node_whole.size_bytes = supply.size_bytes;
  node_whole.shortfall_bytes = node.shortfall_bytes.value_or(0);
  node_whole.short_of_memory = node.short_of_memory;
  if (supply.footprint_bytes) {
    node_whole.footprint_bytes = *supply.footprint_bytes;
    node_whole.growth_bytes_per_second =
        node_growth_.update(current.taken_at, node_whole.footprint_bytes, settings_.roles.growth_half_life);
  }
  if (current.processes) node_whole.unbacked_promise_bytes = current.processes->unbacked_promise_bytes;
  settle_roles(stall, node, node_peak_, node_members, node_whole, scan, {});
  note_transition(transitions, current, "node", node_logged_, stall, node);
  derived.stall = std::move(stall);
  derived.node_scope = std::move(node);

  // The promises coming due: they are paid as the backed memory (AnonPages + Shmem + swap in
  // use) rises; at that rate the supply lasts supply / rate, which matters only while more can
  // come due than the supply (else every promise can be paid). The unbacked figure's own fall is
  // no payment: exits and munmap cancel promises and leave the supply as it was.
  if (derived.overcommit && derived.overcommit->charged_unbacked_bytes && current.system_memory &&
      current.system_memory->commit_backed_bytes) {
    OvercommitVerdict& o = *derived.overcommit;
    o.payment_bytes_per_second =
        promise_payment_.add(current.taken_at, static_cast<double>(*current.system_memory->commit_backed_bytes),
                             settings_.forecast);
    o.promise_exhaustion_seconds =
        promise_exhaustion_seconds(static_cast<double>(*o.charged_unbacked_bytes), static_cast<double>(o.supply_bytes),
                                   o.payment_bytes_per_second, settings_.forecast);
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
