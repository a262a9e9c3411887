// SPDX-License-Identifier: Apache-2.0
#include "probes/core/process_selection.hpp"

#include "probes/core/utf8_text.hpp"

#include <algorithm>
#include <numeric>
#include <unordered_map>

namespace memdiag {
namespace {

double ratio_of(const ProcessMaps& p, std::uint64_t max_map_count) {
  return max_map_count == 0 ? 0.0 : static_cast<double>(p.map_count) / static_cast<double>(max_map_count);
}

// Marks the first `n` processes of `order` after partially sorting it by `before`.
template <class Before>
void mark_top(std::vector<std::uint32_t>& order, std::size_t n, Before before, std::vector<std::uint8_t>& marks,
              std::uint8_t bit) {
  n = std::min(n, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), order.end(), before);
  for (std::size_t i = 0; i < n; ++i) marks[order[i]] |= bit;
}

// More private memory than the node could have charged: MAP_NORESERVE reservations (modes 0
// and 1 leave them out of Committed_AS, VmData has them), not promises that can come due.
bool holds_uncharged_reservation(const ProcessMaps& p, const ProcessSelectionOptions& options) {
  if (options.commit_charge_bytes && p.committed_private_bytes > *options.commit_charge_bytes) return true;
  return options.node_unbacked_bytes && p.unbacked_promise_bytes() > *options.node_unbacked_bytes;
}

SelectedProcess to_selected(const ProcessMaps& p, double ratio, std::uint8_t why, const std::string* cgroup) {
  SelectedProcess s;
  s.pid = p.pid;
  // Whatever bytes a program put there (prctl, argv[0]): valid UTF-8 and no control characters.
  s.comm = utf8::to_valid(p.comm_view(), /*no_controls=*/true);
  if (cgroup != nullptr) s.cgroup = *cgroup;
  s.map_count = p.map_count;
  s.map_areas_ratio = ratio;
  s.rss_anon_bytes = p.rss_anon_bytes;
  s.rss_file_bytes = p.rss_file_bytes;
  s.rss_shmem_bytes = p.rss_shmem_bytes;
  s.swap_bytes = p.swap_bytes;
  s.virtual_bytes = p.virtual_bytes;
  s.committed_private_bytes = p.committed_private_bytes;
  s.unbacked_promise_bytes = p.unbacked_promise_bytes();
  s.thread_stack_bytes = p.thread_stack_bytes;
  s.private_file_bytes = p.private_file_bytes;
  s.selected_for = why;
  return s;
}

void add_cgroup_sums(const std::vector<ProcessMaps>& processes, const std::vector<std::uint8_t>& uncharged,
                     const ProcessSelectionOptions& options, const CgroupNamer& name_cgroup, ProcessSection& section) {
  std::unordered_map<std::uint64_t, CgroupProcessTotals> by_key;
  for (std::size_t i = 0; i < processes.size(); ++i) {
    const ProcessMaps& p = processes[i];
    CgroupProcessTotals& t = by_key[p.cgroup_key];
    ++t.processes;
    t.map_count += p.map_count;
    t.rss_anon_bytes += p.rss_anon_bytes;
    t.rss_file_bytes += p.rss_file_bytes;
    t.rss_shmem_bytes += p.rss_shmem_bytes;
    t.swap_bytes += p.swap_bytes;
    if (uncharged[i]) continue;  // reservations, not promises
    t.committed_private_bytes += p.committed_private_bytes;
    t.unbacked_promise_bytes += p.unbacked_promise_bytes();
  }
  std::vector<CgroupProcessTotals> named;
  named.reserve(by_key.size());
  for (auto& [key, totals] : by_key) {
    const std::string* path = key == 0 ? nullptr : name_cgroup(key);
    if (path == nullptr) {
      section.unknown_cgroup_processes += totals.processes;
      continue;
    }
    totals.cgroup = *path;
    named.push_back(std::move(totals));
  }
  // The cap keeps the cgroups that matter by either measure: taken in turn from the ranking by
  // resident memory and from the ranking by unbacked promise (cgroups holding none are not in
  // that one), each cgroup once, until max_cgroups are kept. So a cgroup that promised much but
  // holds little resident memory (the one whose promises may come due) is not dropped for one
  // that holds a little more resident memory; with fewer promise holders than half the cap,
  // the rest goes to resident memory. Ties: by path, so the kept set does not flap.
  auto resident = [](const CgroupProcessTotals& t) { return t.rss_anon_bytes + t.rss_file_bytes + t.rss_shmem_bytes; };
  const auto more_resident = [&](const CgroupProcessTotals& a, const CgroupProcessTotals& b) {
    if (resident(a) != resident(b)) return resident(a) > resident(b);
    return a.cgroup < b.cgroup;
  };
  std::sort(named.begin(), named.end(), more_resident);
  const std::size_t named_cgroups = named.size();
  if (named.size() > options.max_cgroups) {
    std::vector<std::uint32_t> by_unbacked;
    for (std::uint32_t i = 0; i < named.size(); ++i) {
      if (named[i].unbacked_promise_bytes > 0) by_unbacked.push_back(i);
    }
    std::sort(by_unbacked.begin(), by_unbacked.end(), [&](std::uint32_t a, std::uint32_t b) {
      if (named[a].unbacked_promise_bytes != named[b].unbacked_promise_bytes) {
        return named[a].unbacked_promise_bytes > named[b].unbacked_promise_bytes;
      }
      return named[a].cgroup < named[b].cgroup;
    });
    std::vector<bool> keep(named.size(), false);
    std::size_t kept = 0;
    std::size_t next_resident = 0;  // index into named, already in resident order
    std::size_t next_unbacked = 0;  // index into by_unbacked
    bool resident_turn = true;
    while (kept < options.max_cgroups && (next_resident < named.size() || next_unbacked < by_unbacked.size())) {
      if (resident_turn || next_unbacked >= by_unbacked.size()) {
        while (next_resident < named.size() && keep[next_resident]) ++next_resident;
        if (next_resident < named.size()) {
          keep[next_resident] = true;
          ++kept;
        }
      } else {
        while (next_unbacked < by_unbacked.size() && keep[by_unbacked[next_unbacked]]) ++next_unbacked;
        if (next_unbacked < by_unbacked.size()) {
          keep[by_unbacked[next_unbacked]] = true;
          ++kept;
        }
      }
      resident_turn = !resident_turn;
    }
    std::size_t out = 0;
    for (std::size_t i = 0; i < named.size(); ++i) {
      if (!keep[i]) continue;
      if (out != i) named[out] = std::move(named[i]);  // a self-move would empty the path
      ++out;  // stays in resident order
    }
    named.resize(out);
  }
  section.dropped_cgroups = named_cgroups - named.size();
  section.cgroups = std::move(named);
}

}  // namespace

std::vector<std::uint32_t> promise_candidates(const std::vector<ProcessMaps>& processes,
                                              const ProcessSelectionOptions& options, std::size_t n) {
  std::vector<std::uint32_t> holders;
  for (std::uint32_t i = 0; i < processes.size(); ++i) {
    if (processes[i].unbacked_promise_bytes() > 0 && !holds_uncharged_reservation(processes[i], options)) {
      holders.push_back(i);
    }
  }
  n = std::min(n, holders.size());
  std::partial_sort(holders.begin(), holders.begin() + static_cast<std::ptrdiff_t>(n), holders.end(),
                    [&processes](std::uint32_t a, std::uint32_t b) {
                      const std::uint64_t x = processes[a].unbacked_promise_bytes();
                      const std::uint64_t y = processes[b].unbacked_promise_bytes();
                      return x != y ? x > y : processes[a].pid < processes[b].pid;
                    });
  holders.resize(n);
  return holders;
}

ProcessSection select_processes(const std::vector<ProcessMaps>& processes, std::uint64_t max_map_count,
                                const ProcessSelectionOptions& options, const CgroupNamer& name_cgroup) {
  ProcessSection section;
  section.max_map_count = max_map_count;
  section.threshold_ratio = options.threshold_ratio;
  section.processes = processes.size();

  std::vector<std::uint8_t> marks(processes.size(), 0);
  std::vector<std::uint8_t> uncharged(processes.size(), 0);
  std::vector<std::uint32_t> above;  // indices at or above the threshold
  for (std::uint32_t i = 0; i < processes.size(); ++i) {
    const ProcessMaps& p = processes[i];
    const double ratio = ratio_of(p, max_map_count);
    section.map_areas_ratio_max = std::max(section.map_areas_ratio_max, ratio);
    for (std::size_t b = 0; b < kMapAreasRatioBounds.size(); ++b) {
      if (ratio <= kMapAreasRatioBounds[b]) ++section.ratio_cumulative[b];
    }
    ++section.ratio_cumulative.back();
    section.rss_anon_bytes += p.rss_anon_bytes;
    if (holds_uncharged_reservation(p, options)) {
      uncharged[i] = 1;
      ++section.uncharged_reservation_processes;
      section.uncharged_reservation_bytes += p.committed_private_bytes;
    } else {
      section.committed_private_bytes += p.committed_private_bytes;
      section.unbacked_promise_bytes += p.unbacked_promise_bytes();
      if (p.not_due_read) {
        ++section.not_due_processes;
        section.not_due_thread_stack_bytes += p.thread_stack_bytes;
        section.not_due_private_file_bytes += p.private_file_bytes;
      }
    }
    if (max_map_count != 0 && ratio >= options.threshold_ratio) above.push_back(i);
    if (options.self_pid != 0 && p.pid == options.self_pid) marks[i] |= kSelf;
  }

  // Ties go to the lower pid, so the selection does not flap between equal processes.
  const auto more_maps = [&processes](std::uint32_t a, std::uint32_t b) {
    const ProcessMaps& x = processes[a];
    const ProcessMaps& y = processes[b];
    return x.map_count != y.map_count ? x.map_count > y.map_count : x.pid < y.pid;
  };
  const auto more_resident = [&processes](std::uint32_t a, std::uint32_t b) {
    const ProcessMaps& x = processes[a];
    const ProcessMaps& y = processes[b];
    return x.rss_bytes() != y.rss_bytes() ? x.rss_bytes() > y.rss_bytes() : x.pid < y.pid;
  };
  std::vector<std::uint32_t> order(processes.size());
  std::iota(order.begin(), order.end(), 0u);
  mark_top(order, options.top_n, more_maps, marks, kTopMapAreas);
  mark_top(order, options.top_n, more_resident, marks, kTopResident);
  // Only processes holding an unbacked promise compete: a process promised nothing is no
  // holder, and marking the lowest pids of a node of such would show nothing. Nor is one whose
  // "promise" the node never charged (a MAP_NORESERVE reservation).
  std::vector<std::uint32_t> holders;
  for (std::uint32_t i = 0; i < processes.size(); ++i) {
    if (processes[i].unbacked_promise_bytes() > 0 && !uncharged[i]) holders.push_back(i);
  }
  const auto more_unbacked = [&processes](std::uint32_t a, std::uint32_t b) {
    const std::uint64_t x = processes[a].unbacked_promise_bytes();
    const std::uint64_t y = processes[b].unbacked_promise_bytes();
    return x != y ? x > y : processes[a].pid < processes[b].pid;
  };
  mark_top(holders, options.top_n, more_unbacked, marks, kTopUnbacked);
  section.above_threshold = above.size();
  mark_top(above, options.max_above_threshold, more_maps, marks, kAboveThreshold);
  section.above_threshold_dropped = above.size() - std::min(above.size(), options.max_above_threshold);

  for (std::uint32_t i = 0; i < processes.size(); ++i) {
    if (marks[i] == 0) continue;
    const ProcessMaps& p = processes[i];
    const std::string* cgroup = p.cgroup_key == 0 ? nullptr : name_cgroup(p.cgroup_key);
    section.selected.push_back(to_selected(p, ratio_of(p, max_map_count), marks[i], cgroup));
    section.selected.back().uncharged_reservation = uncharged[i] != 0;
  }
  std::sort(section.selected.begin(), section.selected.end(),
            [](const SelectedProcess& a, const SelectedProcess& b) { return a.pid < b.pid; });

  add_cgroup_sums(processes, uncharged, options, name_cgroup, section);
  return section;
}

}  // namespace memdiag
