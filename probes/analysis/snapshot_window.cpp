// SPDX-License-Identifier: Apache-2.0
#include "probes/analysis/snapshot_window.hpp"

namespace memdiag::analysis {

double seconds_between(const Snapshot& start, const Snapshot& current) {
  const auto elapsed = current.taken_at - start.taken_at;
  return elapsed.count() > 0 ? std::chrono::duration<double>(elapsed).count() : 0;
}

const Snapshot* window_start(const std::vector<SnapshotPtr>& ring, const Snapshot& current,
                             std::chrono::milliseconds length) {
  const Snapshot* oldest_before = nullptr;
  for (auto it = ring.rbegin(); it != ring.rend(); ++it) {
    const Snapshot& s = **it;
    if (s.taken_at >= current.taken_at) continue;  // not before: no window
    oldest_before = &s;
    if (current.taken_at - s.taken_at >= length) return &s;
  }
  return oldest_before;
}

}  // namespace memdiag::analysis
