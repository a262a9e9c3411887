// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <chrono>
#include <ctime>

#include "exporters/report/breaking_section.hpp"
#include "exporters/report/diagnosis_report.hpp"
#include "exporters/report/json_writer.hpp"
#include "exporters/report/next_steps.hpp"
#include "exporters/report/report_selection.hpp"

namespace memdiag::report {

namespace {

void level(JsonWriter& w, std::string_view name, VerdictLevel l) {
  w.key(name);
  w.begin_object();
  w.field("name", to_string(l));
  w.field("value", static_cast<std::uint64_t>(l));
  w.end_object();
}

void reasons(JsonWriter& w, const std::vector<VerdictReason>& list) {
  w.key("reasons");
  w.begin_array();
  for (const VerdictReason& r : list) {
    w.begin_object();
    w.field("code", r.code);
    w.field("value", r.value);
    w.field("threshold", r.threshold);
    w.field("level", to_string(r.level));
    w.end_object();
  }
  w.end_array();
}

void figures(JsonWriter& w, const StallFigures& f) {
  w.key("figures");
  w.begin_object();
  w.field("window_seconds", f.window_seconds);
  w.field("psi_some_ratio", f.psi_some_ratio);
  w.field("psi_full_ratio", f.psi_full_ratio);
  w.field("psi_some_sustained_ratio", f.psi_some_persistence.sustained_ratio);
  w.field("psi_full_sustained_ratio", f.psi_full_persistence.sustained_ratio);
  w.field("psi_some_long_ratio", f.psi_some_persistence.long_ratio);
  w.field("psi_full_long_ratio", f.psi_full_persistence.long_ratio);
  w.field("ebpf_stall_sustained_ratio", f.ebpf_persistence.sustained_ratio);
  w.field("ebpf_stall_long_ratio", f.ebpf_persistence.long_ratio);
  w.field("global_scan_pages_per_second", f.global_scan_pages_per_second);
  w.field("direct_reclaim_stall_ratio", f.direct_reclaim_stall_ratio);
  w.field("memcg_reclaim_stall_ratio", f.memcg_reclaim_stall_ratio);
  w.field("compaction_stall_ratio", f.compaction_stall_ratio);
  w.field("allocstalls_per_second", f.allocstalls_per_second);
  w.field("direct_scan_pages_per_second", f.direct_scan_pages_per_second);
  w.field("compact_stalls_per_second", f.compact_stalls_per_second);
  w.field("limit_events_per_second", f.limit_events_per_second);
  w.field("refault_ratio", f.refault_ratio);
  w.field("reclaim_inefficiency", f.reclaim_inefficiency);
  w.field("oom_kills", f.oom_kills);
  w.field("swap_free_ratio", f.swap_free_ratio);
  w.field("fault_latency_ratio", f.fault_latency_ratio);
  w.field("hard_faults_per_second", f.hard_faults_per_second);
  w.field("pages_input_per_second", f.pages_input_per_second);
  w.field("low_memory", f.low_memory);
  w.end_object();
}

void members(JsonWriter& w, std::string_view name, const ScopeAnalysis& scope, PressureRole role) {
  w.key(name);
  w.begin_array();
  for (const ScopeMember& m : scope.members) {
    if (m.role != role) continue;
    w.begin_object();
    w.field("cgroup", m.cgroup);
    w.field("contribution_ratio", m.contribution_ratio);
    w.field("footprint_bytes", m.footprint_bytes);
    w.field("swap_bytes", m.swap_bytes);
    w.field("growth_bytes_per_second", m.growth_bytes_per_second);
    w.field("relief_bytes", m.relief_bytes);
    w.field("relief_swap_bytes", m.relief_swap_bytes);
    if (scope.shortfall_bytes) w.field("relief_covers_shortfall", m.relief_bytes >= *scope.shortfall_bytes);
    w.field("stall_ratio", m.stall_ratio);
    w.field("refault_ratio", m.refault_ratio);
    w.field("unbacked_promise_bytes", m.unbacked_promise_bytes);
    w.end_object();
  }
  w.end_array();
}

void processes(JsonWriter& w, const ScopeAnalysis& scope) {
  w.key("processes");
  w.begin_array();
  for (const ScopeProcess& p : scope.processes) {
    w.begin_object();
    w.field("pid", static_cast<std::uint64_t>(p.pid));
    w.field("comm", p.comm);
    w.field("cgroup", p.cgroup);
    w.field("contribution_ratio", p.contribution_ratio);
    w.field("footprint_bytes", p.footprint_bytes);
    w.field("growth_bytes_per_second", p.growth_bytes_per_second);
    w.field("relief_bytes", p.relief_bytes);
    w.field("relief_swap_bytes", p.relief_swap_bytes);
    if (scope.shortfall_bytes) w.field("relief_covers_shortfall", p.relief_bytes >= *scope.shortfall_bytes);
    w.field("unbacked_promise_bytes", p.unbacked_promise_bytes);
    w.end_object();
  }
  w.end_array();
}

void strings(JsonWriter& w, std::string_view name, const std::vector<std::string_view>& list) {
  w.key(name);
  w.begin_array();
  for (std::string_view s : list) w.string(s);
  w.end_array();
}

void scope(JsonWriter& w, const StallVerdict& stall, const ScopeAnalysis& analysis, bool node) {
  level(w, "level", stall.level);
  level(w, "instant_level", stall.instant_level);
  w.field("easing", analysis.easing);
  reasons(w, stall.reasons);
  strings(w, "signals", stall.signals);
  strings(w, "missing_signals", stall.missing_signals);
  w.field("confidence", stall.lower_bound ? "lower_bound" : "complete");
  figures(w, stall.figures);
  w.field("short_of_memory", analysis.short_of_memory);
  if (node) w.field("cgroups_at_limit", static_cast<std::uint64_t>(analysis.cgroups_at_limit));
  w.field("available_bytes", analysis.available_bytes);
  w.field("shortfall_bytes", analysis.shortfall_bytes);
  w.field("exhaustion_seconds", analysis.exhaustion_seconds);
  w.field("footprint_bytes", analysis.footprint_bytes);
  w.field("unattributed_bytes", analysis.unattributed_bytes);
  w.field("unattributed_contributes", analysis.unattributed_contributes);
  members(w, "contributors", analysis, PressureRole::kContributor);
  w.field("similar_members", static_cast<std::uint64_t>(analysis.similar_members));
  members(w, "victims", analysis, PressureRole::kVictim);
  processes(w, analysis);
}

}  // namespace

std::string render_diagnosis_json(const Snapshot& snapshot, const ReportOptions& options) {
  std::string out;
  JsonWriter w(out);
  const DerivedFigures& d = snapshot.derived;
  w.begin_object();
  w.field("schema", kDiagnosisSchema);
  w.field("origin", options.origin);
  w.field("sequence", snapshot.sequence);
  w.field("taken_at", iso8601(snapshot.taken_at));

  w.key("stall");
  w.begin_object();
  if (d.stall) {
    scope(w, *d.stall, d.node_scope.value_or(ScopeAnalysis{}), true);
  } else {
    level(w, "level", VerdictLevel::kNone);
  }
  w.end_object();

  w.key("cgroups");
  w.begin_array();
  for (const CgroupScope* s : stalling_scopes(snapshot)) {
    w.begin_object();
    w.field("cgroup", s->cgroup);
    scope(w, s->stall, s->analysis, false);
    w.end_object();
  }
  w.end_array();
  w.field("cgroup_scopes_judged", static_cast<std::uint64_t>(d.cgroup_scopes.size()));

  if (d.overcommit) {
    const OvercommitVerdict& o = *d.overcommit;
    w.key("overcommit");
    w.begin_object();
    level(w, "level", o.level);
    reasons(w, o.reasons);
    w.field("mode", to_string(o.mode));
    w.field("mode_known", o.mode_known);
    w.field("mode_meaning", overcommit_mode_meaning(o.mode, snapshot.windows_memory.has_value()));
    w.field("unbacked_bytes", o.unbacked_bytes);
    w.field("charged_unbacked_bytes", o.charged_unbacked_bytes);
    w.field("capped_by_limits_bytes", o.capped_by_limits_bytes);
    w.field("cow_shared_bytes", o.cow_shared_bytes);
    w.key("uncharged_reservations");
    w.begin_object();
    w.field("processes", o.uncharged_reservation_processes);
    w.field("bytes", o.uncharged_reservation_bytes);
    w.end_object();
    w.field("supply_bytes", o.supply_bytes);
    w.field("payment_bytes_per_second", o.payment_bytes_per_second);
    w.field("exhaustion_seconds", o.promise_exhaustion_seconds);
    w.field("unbacked_to_supply_ratio", o.unbacked_to_supply_ratio);
    w.field("commit_limit_ratio", o.commit_limit_ratio);
    w.field("commit_ratio", o.commit_ratio);
    w.field("cgroup_limit_overcommit_ratio", o.cgroup_limit_overcommit_ratio);
    w.key("cgroups_over_limit");
    w.begin_array();
    for (const CgroupOverLimit& c : o.cgroups_over_limit) {
      w.begin_object();
      w.field("cgroup", c.cgroup);
      w.field("committed_private_bytes", c.committed_private_bytes);
      w.field("unbacked_promise_bytes", c.unbacked_promise_bytes);
      w.field("effective_limit_bytes", c.effective_limit_bytes);
      w.field("headroom_bytes", c.headroom_bytes);
      w.field("risk", "will be OOM-killed at its ceiling if it touches it");
      w.end_object();
    }
    w.end_array();
    w.field("cgroups_over_limit_total", static_cast<std::uint64_t>(o.cgroups_over_limit_total));
    w.end_object();
  }

  if (d.breaking) {
    w.key("breaking");
    w.begin_object();
    write_breaking_json(w, *d.breaking);
    w.end_object();
  }

  if (snapshot.processes) {
    w.key("promise_holders");
    w.begin_object();
    // What the largest holders' maps showed is not a promise likely to come due, left out of
    // their unbacked figures.
    w.key("not_due");
    w.begin_object();
    w.field("processes_read", snapshot.processes->not_due_processes);
    w.field("thread_stack_bytes", snapshot.processes->not_due_thread_stack_bytes);
    w.field("private_file_map_bytes", snapshot.processes->not_due_private_file_bytes);
    w.end_object();
    w.key("processes");
    w.begin_array();
    for (const SelectedProcess* p : top_promise_processes(*snapshot.processes)) {
      w.begin_object();
      w.field("pid", static_cast<std::uint64_t>(p->pid));
      w.field("comm", p->comm);
      w.field("cgroup", p->cgroup);
      w.field("unbacked_promise_bytes", p->unbacked_promise_bytes);
      w.field("committed_private_bytes", p->committed_private_bytes);
      // Of the commit, what is not a promise likely to come due, and so not in the unbacked.
      w.field("thread_stack_bytes", p->thread_stack_bytes);
      w.field("private_file_map_bytes", p->private_file_bytes);
      w.end_object();
    }
    w.end_array();
    w.key("cgroups");
    w.begin_array();
    for (const CgroupProcessTotals* c : top_promise_cgroups(*snapshot.processes)) {
      w.begin_object();
      w.field("cgroup", c->cgroup);
      w.field("unbacked_promise_bytes", c->unbacked_promise_bytes);
      w.field("committed_private_bytes", c->committed_private_bytes);
      w.field("processes", c->processes);
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }

  w.key("timeline");
  w.begin_array();
  for (const VerdictTransition* t : recent_transitions(snapshot, options.since)) {
    w.begin_object();
    w.field("at", iso8601(t->at));
    w.field("scope", t->scope);
    w.field("from", to_string(t->from));
    w.field("to", to_string(t->to));
    w.field("evidence", t->evidence);
    w.end_object();
  }
  w.end_array();

  w.key("next_steps");
  w.begin_array();
  for (const std::string& step : next_steps(snapshot)) w.string(step);
  w.end_array();

  w.key("sources_down");
  w.begin_array();
  for (const SourceStatus& s : snapshot.sources) {
    if (s.up) continue;
    w.begin_object();
    w.field("source", s.name);
    w.field("error", s.error);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  out += '\n';
  return out;
}

}  // namespace memdiag::report
