// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cctype>
#include <cstdarg>
#include <cstdio>

#include "exporters/report/breaking_section.hpp"
#include "exporters/report/diagnosis_report.hpp"
#include "exporters/report/next_steps.hpp"
#include "exporters/report/report_selection.hpp"
#include "probes/analysis/verdict_evidence.hpp"

namespace memdiag::report {

namespace {

using analysis::human_bytes;
constexpr std::size_t kWidth = 80;

// One line of the report, printf-style (checked by the compiler), without trailing blanks.
__attribute__((format(printf, 2, 3))) void line(std::string& out, const char* format, ...) {
  va_list args;
  va_start(args, format);
  analysis::append_vformat(out, format, args);
  va_end(args);
  while (!out.empty() && out.back() == ' ') out.pop_back();  // padded columns leave no trailing blanks
  out += '\n';
}

std::string level_name(VerdictLevel l) {
  std::string s(to_string(l));
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

// `text` folded at word boundaries to the report's width, every line indented by `indent`
// (the first starting with `first` instead, when given). A word longer than a whole line (a
// list of cgroups without spaces) is cut where the line ends.
void wrapped(std::string& out, std::string_view text, std::string_view indent, std::string_view first = {}) {
  std::string current(first.empty() ? indent : first);
  bool line_empty = first.empty();  // nothing but the indent on the current line yet
  const auto flush = [&] {
    while (!current.empty() && current.back() == ' ') current.pop_back();
    out += current + '\n';
    current = std::string(indent);
    line_empty = true;
  };
  while (!text.empty()) {
    const std::size_t space = text.find(' ');
    std::string_view word = text.substr(0, space);
    text = space == std::string_view::npos ? std::string_view{} : text.substr(space + 1);
    if (word.empty()) continue;
    const std::size_t gap = line_empty || current.back() == ' ' ? 0 : 1;
    if (!line_empty && current.size() + gap + word.size() > kWidth) flush();
    if (!line_empty && current.back() != ' ') current += ' ';
    while (current.size() + word.size() > kWidth) {
      if (current.size() < kWidth) {
        const std::size_t room = kWidth - current.size();
        current += word.substr(0, room);
        word.remove_prefix(room);
      }
      flush();
    }
    if (word.empty()) continue;
    current += word;
    line_empty = false;
  }
  if (!line_empty) flush();
}

// A cgroup path shortened from the left to fit `width`, keeping its most specific end.
std::string fit(std::string_view path, std::size_t width) {
  if (path.size() <= width) return std::string(path);
  return "..." + std::string(path.substr(path.size() - (width - 3)));
}

void reasons_block(std::string& out, const std::vector<VerdictReason>& reasons) {
  for (const VerdictReason& r : reasons) {
    line(out, "  %-18s %10.3g  >= %-8.3g %s", std::string(r.code).c_str(), r.value, r.threshold,
         std::string(to_string(r.level)).c_str());
  }
}

void scope_block(std::string& out, const StallVerdict& stall, const ScopeAnalysis& analysis) {
  if (analysis.easing) line(out, "  easing: the pressure eased; what set the held level:");
  reasons_block(out, stall.reasons);
  std::string signals;
  for (std::string_view s : stall.signals) signals += (signals.empty() ? "" : ", ") + std::string(s);
  line(out, "  signals: %s; window %.1f s", signals.c_str(), stall.figures.window_seconds);
  if (stall.lower_bound) {
    std::string missing;
    for (std::string_view s : stall.missing_signals) missing += (missing.empty() ? "" : ", ") + std::string(s);
    line(out, "  missing: %s: the level is a lower bound (waits on refaults and swap-ins unmeasured)",
         missing.c_str());
  }
  if (analysis.cgroups_at_limit > 0 && !analysis.short_of_memory) {
    line(out, "  not short of memory itself: %llu cgroups stall at their own limits (below)",
         static_cast<unsigned long long>(analysis.cgroups_at_limit));
  }
  std::string supply;
  if (analysis.available_bytes) supply += "available " + human_bytes(static_cast<double>(*analysis.available_bytes));
  if (analysis.shortfall_bytes) {
    supply += (supply.empty() ? "" : ", ") + std::string("shortfall ") +
              human_bytes(static_cast<double>(*analysis.shortfall_bytes));
  }
  if (analysis.exhaustion_seconds) {
    char when[64];
    std::snprintf(when, sizeof when, "out of memory in ~%.0f s at this rate", *analysis.exhaustion_seconds);
    supply += (supply.empty() ? "" : ", ") + std::string(when);
  }
  if (!supply.empty()) line(out, "  %s", supply.c_str());
  if (analysis.unattributed_contributes && analysis.unattributed_bytes && analysis.footprint_bytes &&
      *analysis.unattributed_bytes < *analysis.footprint_bytes) {
    line(out, "  held outside any member (own processes, unexported cgroups, tmpfs): %s",
         human_bytes(static_cast<double>(*analysis.unattributed_bytes)).c_str());
  }
  bool header = false;
  for (const ScopeMember& m : analysis.members) {
    if (m.role != PressureRole::kContributor) continue;
    if (!header) line(out, "  %-34s %6s %11s %9s  %s", "contributors", "share", "growth/s", "relief", "");
    header = true;
    const bool covers = analysis.shortfall_bytes && m.relief_bytes >= *analysis.shortfall_bytes;
    line(out, "  %-34s %6.2f %11s %9s  %s", fit(m.cgroup, 34).c_str(), m.contribution_ratio,
         human_bytes(m.growth_bytes_per_second).c_str(), human_bytes(static_cast<double>(m.relief_bytes)).c_str(),
         analysis.shortfall_bytes && *analysis.shortfall_bytes > 0 ? (covers ? "covers" : "short") : "");
  }
  if (header && analysis.similar_members > 0) {
    line(out, "  ... and %llu similar members", static_cast<unsigned long long>(analysis.similar_members));
  }
  header = false;
  for (const ScopeProcess& p : analysis.processes) {
    if (!header) line(out, "  %-34s %6s %11s %9s  %s", "processes", "share", "growth/s", "relief", "");
    header = true;
    const bool covers = analysis.shortfall_bytes && p.relief_bytes >= *analysis.shortfall_bytes;
    const std::string who = std::to_string(p.pid) + " " + p.comm + " " + p.cgroup;
    line(out, "  %-34s %6.2f %11s %9s  %s", fit(who, 34).c_str(), p.contribution_ratio,
         p.growth_bytes_per_second ? human_bytes(*p.growth_bytes_per_second).c_str() : "-",
         human_bytes(static_cast<double>(p.relief_bytes)).c_str(),
         analysis.shortfall_bytes && *analysis.shortfall_bytes > 0 ? (covers ? "covers" : "short") : "");
  }
  header = false;
  for (const ScopeMember& m : analysis.members) {
    if (m.role != PressureRole::kVictim) continue;
    if (!header) line(out, "  %-34s %6s %11s", "victims", "stall", "refaults");
    header = true;
    char stall_text[16] = "-", refault_text[16] = "-";
    if (m.stall_ratio) std::snprintf(stall_text, sizeof stall_text, "%.2f", *m.stall_ratio);
    if (m.refault_ratio) std::snprintf(refault_text, sizeof refault_text, "%.2f", *m.refault_ratio);
    line(out, "  %-34s %6s %11s", fit(m.cgroup, 34).c_str(), stall_text, refault_text);
  }
}

}  // namespace

std::string render_diagnosis_text(const Snapshot& snapshot, const ReportOptions& options) {
  std::string out;
  const DerivedFigures& d = snapshot.derived;
  line(out, "memdiag diagnosis, %s, sample %llu (%s)", iso8601(snapshot.taken_at).c_str(),
       static_cast<unsigned long long>(snapshot.sequence), std::string(options.origin).c_str());
  out += '\n';

  const StallVerdict none{};
  const StallVerdict& stall = d.stall ? *d.stall : none;
  if (stall.level != stall.instant_level) {
    line(out, "NODE STALL: %s (held, easing; this sample alone: %s)", level_name(stall.level).c_str(),
         std::string(to_string(stall.instant_level)).c_str());
  } else {
    line(out, "NODE STALL: %s", level_name(stall.level).c_str());
  }
  scope_block(out, stall, d.node_scope.value_or(ScopeAnalysis{}));

  const auto scopes = stalling_scopes(snapshot);
  for (const CgroupScope* s : scopes) {
    out += '\n';
    // "CGROUP STALL: CRITICAL " takes 23 of the 80 columns.
    line(out, "CGROUP STALL: %s %s", level_name(s->stall.level).c_str(), fit(s->cgroup, 57).c_str());
    if (s->stall.level != s->stall.instant_level) {
      // On a line of its own: beside a cgroup's path it would not fit 80 columns.
      line(out, "  (held, easing; this sample alone: %s)", std::string(to_string(s->stall.instant_level)).c_str());
    }
    scope_block(out, s->stall, s->analysis);
  }
  if (scopes.empty() && !d.cgroup_scopes.empty()) {
    line(out, "  (%llu cgroups with a limit judged; none stalling)",
         static_cast<unsigned long long>(d.cgroup_scopes.size()));
  }

  if (d.overcommit) {
    const OvercommitVerdict& o = *d.overcommit;
    out += '\n';
    line(out, "OVERCOMMIT RISK: %s (mode %s%s)", level_name(o.level).c_str(), std::string(to_string(o.mode)).c_str(),
         o.mode_known ? "" : ", assumed");
    reasons_block(out, o.reasons);
    if (o.unbacked_bytes) {
      std::string ratio;
      if (o.unbacked_to_supply_ratio) {
        char r[32];
        std::snprintf(r, sizeof r, " (%.2f of it)", *o.unbacked_to_supply_ratio);
        ratio = r;
      }
      line(out, "  promised, not backed: %s", human_bytes(static_cast<double>(*o.unbacked_bytes)).c_str());
      if (o.cow_shared_bytes && *o.cow_shared_bytes > 0) {
        line(out, "    of it copy-on-write sharing after fork (paid only when written): %s",
             human_bytes(static_cast<double>(*o.cow_shared_bytes)).c_str());
      }
      if (o.capped_by_limits_bytes > 0) {
        line(out, "    of it capped by cgroup limits (due only at their ceilings): %s",
             human_bytes(static_cast<double>(o.capped_by_limits_bytes)).c_str());
      }
      if (o.charged_unbacked_bytes) {
        line(out, "  can come due: %s; the node can still supply %s%s",
             human_bytes(static_cast<double>(*o.charged_unbacked_bytes)).c_str(),
             human_bytes(static_cast<double>(o.supply_bytes)).c_str(), ratio.c_str());
      }
    }
    if (o.uncharged_reservation_processes > 0) {
      line(out, "  MAP_NORESERVE reservations left out (never charged): %s in %llu processes",
           human_bytes(static_cast<double>(o.uncharged_reservation_bytes)).c_str(),
           static_cast<unsigned long long>(o.uncharged_reservation_processes));
    }
    if (snapshot.processes && snapshot.processes->not_due_processes > 0) {
      const ProcessSection& p = *snapshot.processes;
      const std::uint64_t not_due = p.not_due_thread_stack_bytes + p.not_due_private_file_bytes;
      if (not_due > 0) {
        line(out, "  not due, left out of the %llu largest holders' promises:",
             static_cast<unsigned long long>(p.not_due_processes));
        line(out, "    thread stacks %s, private file maps %s",
             human_bytes(static_cast<double>(p.not_due_thread_stack_bytes)).c_str(),
             human_bytes(static_cast<double>(p.not_due_private_file_bytes)).c_str());
      }
    }
    if (o.promise_exhaustion_seconds && o.payment_bytes_per_second) {
      line(out, "  promises being paid at %s/s use up the supply in ~%.0f s",
           human_bytes(*o.payment_bytes_per_second).c_str(), *o.promise_exhaustion_seconds);
    }
    // Each cgroup's own risk, not the node's: the largest excess first, a few of them.
    const std::size_t shown = std::min<std::size_t>(o.cgroups_over_limit.size(), 3);
    for (std::size_t i = 0; i < shown; ++i) {
      const CgroupOverLimit& c = o.cgroups_over_limit[i];
      line(out, "  cgroup %s", fit(c.cgroup, 70).c_str());
      line(out, "    promised %s (%s unbacked) against a limit of %s:",
           human_bytes(static_cast<double>(c.committed_private_bytes)).c_str(),
           human_bytes(static_cast<double>(c.unbacked_promise_bytes)).c_str(),
           human_bytes(static_cast<double>(c.effective_limit_bytes)).c_str());
      line(out, "    will be OOM-killed at its ceiling if it touches it");
    }
    if (o.cgroups_over_limit_total > shown) {
      line(out, "  (%llu more cgroups promised beyond their limits)",
           static_cast<unsigned long long>(o.cgroups_over_limit_total - shown));
    }
    // Linux's names where they are Linux's fields; Windows's otherwise.
    const bool windows = snapshot.windows_memory.has_value();
    if (o.commit_ratio) {
      line(out, windows ? "  commit charge / (RAM + page files): %.2f" : "  Committed_AS / (RAM + swap): %.2f",
           *o.commit_ratio);
    }
    if (o.commit_limit_ratio) {
      line(out, windows ? "  commit charge / commit limit: %.2f" : "  Committed_AS / CommitLimit: %.2f",
           *o.commit_limit_ratio);
    }
    wrapped(out, overcommit_mode_meaning(o.mode, snapshot.windows_memory.has_value()), "  ");
  }

  if (d.breaking) {
    const std::vector<std::string> breaking = breaking_text(*d.breaking);
    out += '\n';
    line(out, "%s", breaking.front().c_str());
    for (std::size_t i = 1; i < breaking.size(); ++i) wrapped(out, breaking[i], "    ", "  - ");
  }

  if (snapshot.processes) {
    const auto processes = top_promise_processes(*snapshot.processes);
    const auto cgroups = top_promise_cgroups(*snapshot.processes);
    if (!processes.empty() || !cgroups.empty()) {
      out += '\n';
      line(out, "PROMISE HOLDERS (committed private memory not resident)");
      for (const SelectedProcess* p : processes) {
        line(out, "  pid %-7d %-16s %10s  %s", p->pid, p->comm.c_str(),
             human_bytes(static_cast<double>(p->unbacked_promise_bytes)).c_str(), fit(p->cgroup, 37).c_str());
      }
      for (const CgroupProcessTotals* c : cgroups) {
        line(out, "  cgroup %-38s %10s  (%llu processes)", fit(c->cgroup, 38).c_str(),
             human_bytes(static_cast<double>(c->unbacked_promise_bytes)).c_str(),
             static_cast<unsigned long long>(c->processes));
      }
    }
  }

  const auto transitions = recent_transitions(snapshot, options.since);
  out += '\n';
  line(out, "TIMELINE (%llu transitions)", static_cast<unsigned long long>(transitions.size()));
  for (const VerdictTransition* t : transitions) {
    const std::string at = iso8601(t->at).substr(11, 8);
    char head[160];
    std::snprintf(head, sizeof head, "  %s %s %s -> %s: ", at.c_str(), fit(t->scope, 30).c_str(),
                  std::string(to_string(t->from)).c_str(), std::string(to_string(t->to)).c_str());
    wrapped(out, t->evidence, "      ", head);
  }

  const auto steps = next_steps(snapshot);
  if (!steps.empty()) {
    out += '\n';
    line(out, "NEXT STEPS");
    for (const std::string& step : steps) wrapped(out, step, "    ", "  - ");
  }

  bool down_header = false;
  for (const SourceStatus& s : snapshot.sources) {
    if (s.up) continue;
    if (!down_header) {
      out += '\n';
      line(out, "SOURCES DOWN (the verdicts did without them)");
      down_header = true;
    }
    wrapped(out, s.name + ": " + s.error, "    ", "  - ");
  }
  return out;
}

}  // namespace memdiag::report
