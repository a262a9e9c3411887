// SPDX-License-Identifier: Apache-2.0
#include "probes/analysis/verdict_evidence.hpp"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <iterator>

namespace memdiag::analysis {

void append_vformat(std::string& out, const char* format, va_list args) {
  char buffer[512];
  const int n = std::vsnprintf(buffer, sizeof buffer, format, args);
  if (n > 0) out.append(buffer, std::min<std::size_t>(static_cast<std::size_t>(n), sizeof buffer - 1));
}

void append_format(std::string& out, const char* format, ...) {
  va_list args;
  va_start(args, format);
  append_vformat(out, format, args);
  va_end(args);
}

std::string human_bytes(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  std::size_t unit = 0;
  double value = bytes;
  while (std::fabs(value) >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  std::string out;
  append_format(out, unit == 0 ? "%.0f%s" : "%.3g%s", value, kUnits[unit]);
  return out;
}

std::string describe_evidence(const StallVerdict& verdict, const ScopeAnalysis* scope) {
  std::string out;
  for (const VerdictReason& r : verdict.reasons) {
    const std::string code(r.code);
    append_format(out, "%s=%.3g(>=%.3g,%s) ", code.c_str(), r.value, r.threshold, std::string(to_string(r.level)).c_str());
  }
  out += "signals=";
  for (std::size_t i = 0; i < verdict.signals.size(); ++i) {
    if (i) out += ',';
    out += verdict.signals[i];
  }
  if (verdict.lower_bound) {
    out += " lower_bound(missing=";
    for (std::size_t i = 0; i < verdict.missing_signals.size(); ++i) {
      if (i) out += ',';
      out += verdict.missing_signals[i];
    }
    out += ')';
  }
  append_format(out, " window=%.1fs", verdict.figures.window_seconds);
  if (!scope) return out;
  if (scope->cgroups_at_limit > 0) append_format(out, " cgroups_at_limit=%llu", static_cast<unsigned long long>(scope->cgroups_at_limit));
  if (scope->shortfall_bytes) out += " shortfall=" + human_bytes(static_cast<double>(*scope->shortfall_bytes));
  if (scope->exhaustion_seconds) append_format(out, " exhausted_in=%.0fs", *scope->exhaustion_seconds);
  if (scope->easing) out += " easing";
  if (scope->unattributed_contributes && scope->unattributed_bytes) {
    out += " unattributed=" + human_bytes(static_cast<double>(*scope->unattributed_bytes));
  }
  for (PressureRole role : {PressureRole::kContributor, PressureRole::kVictim}) {
    bool first = true;
    for (const ScopeMember& m : scope->members) {
      if (m.role != role) continue;
      out += first ? (role == PressureRole::kContributor ? " contributors=" : " victims=") : ",";
      first = false;
      out += m.cgroup;
      if (role == PressureRole::kContributor) {
        append_format(out, ":%.2f:relief=", m.contribution_ratio);
        out += human_bytes(static_cast<double>(m.relief_bytes));
      }
    }
    if (role == PressureRole::kContributor && !first && scope->similar_members > 0) {
      append_format(out, " similar=%llu", static_cast<unsigned long long>(scope->similar_members));
    }
  }
  // The process pressing most. A comm is whatever the program set (blanks, ':', '=', even
  // control characters): anything but a plain printable character becomes '_', so the line
  // stays one line of key=value fields.
  if (!scope->processes.empty()) {
    const ScopeProcess& p = scope->processes.front();
    std::string comm = p.comm;
    for (char& c : comm) {
      const auto u = static_cast<unsigned char>(c);
      if (u <= ' ' || u >= 0x7f || c == ':' || c == '=' || c == ',') c = '_';
    }
    append_format(out, " top_process=%d:%s:relief=", p.pid, comm.c_str());
    out += human_bytes(static_cast<double>(p.relief_bytes));
  }
  return out;
}

}  // namespace memdiag::analysis
