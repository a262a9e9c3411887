// SPDX-License-Identifier: Apache-2.0
#include "exporters/report/report_selection.hpp"

#include <algorithm>
#include <cstdio>
#include <chrono>

namespace memdiag::report {

std::vector<const CgroupScope*> stalling_scopes(const Snapshot& snapshot) {
  std::vector<const CgroupScope*> out;
  for (const CgroupScope& s : snapshot.derived.cgroup_scopes) {
    if (s.stall.level != VerdictLevel::kNone || s.stall.instant_level != VerdictLevel::kNone) out.push_back(&s);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const CgroupScope* a, const CgroupScope* b) { return a->stall.level > b->stall.level; });
  return out;
}

std::vector<const SelectedProcess*> top_promise_processes(const ProcessSection& processes) {
  std::vector<const SelectedProcess*> out;
  for (const SelectedProcess& p : processes.selected) {
    // A MAP_NORESERVE reservation is no promise the node made (the scan told it apart).
    if (p.unbacked_promise_bytes > 0 && !p.uncharged_reservation) out.push_back(&p);
  }
  std::stable_sort(out.begin(), out.end(), [](const SelectedProcess* a, const SelectedProcess* b) {
    return a->unbacked_promise_bytes > b->unbacked_promise_bytes;
  });
  if (out.size() > kTopPromiseHolders) out.resize(kTopPromiseHolders);
  return out;
}

std::vector<const CgroupProcessTotals*> top_promise_cgroups(const ProcessSection& processes) {
  std::vector<const CgroupProcessTotals*> out;
  for (const CgroupProcessTotals& c : processes.cgroups) {
    if (c.unbacked_promise_bytes > 0) out.push_back(&c);
  }
  std::stable_sort(out.begin(), out.end(), [](const CgroupProcessTotals* a, const CgroupProcessTotals* b) {
    return a->unbacked_promise_bytes > b->unbacked_promise_bytes;
  });
  if (out.size() > kTopPromiseHolders) out.resize(kTopPromiseHolders);
  return out;
}

std::vector<const VerdictTransition*> recent_transitions(const Snapshot& snapshot,
                                                         std::optional<std::chrono::milliseconds> since) {
  std::vector<const VerdictTransition*> out;
  if (!snapshot.derived.timeline) return out;
  for (const VerdictTransition& t : *snapshot.derived.timeline) {
    if (since && snapshot.taken_at - t.at > *since) continue;
    out.push_back(&t);
  }
  return out;
}

std::string iso8601(std::chrono::system_clock::time_point at) {
  // The calendar from <chrono> rather than gmtime_r: the same code on Windows, no C library state.
  using namespace std::chrono;
  const auto ms = floor<milliseconds>(at);
  const auto day = floor<days>(ms);
  const year_month_day date(day);
  const hh_mm_ss time(ms - day);
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ", static_cast<int>(date.year()),
                static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                static_cast<int>(time.hours().count()), static_cast<int>(time.minutes().count()),
                static_cast<int>(time.seconds().count()), static_cast<int>(time.subseconds().count()));
  return buffer;
}

}  // namespace memdiag::report
