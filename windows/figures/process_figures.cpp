// SPDX-License-Identifier: Apache-2.0
#include "windows/figures/process_figures.hpp"

#include <algorithm>

namespace memdiag::windows {

namespace {

// The indices of the top n of `all` by `key`, largest first (ties: the lower pid).
template <class Key>
std::vector<std::size_t> top(const std::vector<ProcessCounters>& all, std::size_t n, Key key) {
  std::vector<std::size_t> order(all.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  const std::size_t keep = std::min(n, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(keep), order.end(),
                    [&](std::size_t a, std::size_t b) {
                      if (key(all[a]) != key(all[b])) return key(all[a]) > key(all[b]);
                      return all[a].pid < all[b].pid;
                    });
  order.resize(keep);
  return order;
}

}  // namespace

ProcessMemorySection process_memory(const std::vector<ProcessCounters>& all, std::size_t listed,
                                    const ProcessSelection& selection) {
  std::vector<bool> chosen(all.size(), false);
  for (std::size_t i : top(all, selection.top_n, [](const ProcessCounters& p) { return p.working_set_bytes; })) {
    chosen[i] = true;
  }
  for (std::size_t i : top(all, selection.top_n, [](const ProcessCounters& p) { return p.private_bytes; })) {
    chosen[i] = true;
  }
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i].pid == selection.self_pid && selection.self_pid != 0) chosen[i] = true;
  }

  ProcessMemorySection section;
  section.total_processes = std::max(listed, all.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (!chosen[i]) continue;
    const ProcessCounters& c = all[i];
    ProcessMemory m;
    m.pid = static_cast<int>(c.pid);
    m.name = c.image_name;
    m.resident_bytes = c.working_set_bytes;
    m.committed_private_bytes = c.private_bytes;
    if (c.private_working_set_bytes) {
      m.unbacked_promise_bytes =
          c.private_bytes > *c.private_working_set_bytes ? c.private_bytes - *c.private_working_set_bytes : 0;
    }
    m.peak_resident_bytes = c.peak_working_set_bytes;
    m.page_faults_total = c.page_faults;
    section.processes.push_back(std::move(m));
  }
  std::sort(section.processes.begin(), section.processes.end(),
            [](const ProcessMemory& a, const ProcessMemory& b) { return a.pid < b.pid; });
  return section;
}

}  // namespace memdiag::windows
