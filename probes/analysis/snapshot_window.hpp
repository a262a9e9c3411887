// SPDX-License-Identifier: Apache-2.0
// Rates over the snapshot ring: the model's windows. A counter's rate over a window is its
// change from the snapshot at the window's start to the current one, per second of the time
// between them. PSI's own averages lag (avg10 takes ~10 s to show a stall that began now); its
// `total` counters differenced over the ring give the share of the last seconds.
#pragma once

#include <chrono>
#include <optional>
#include <vector>

#include "probes/core/snapshot_store.hpp"

namespace memdiag::analysis {

// The snapshot a window of `length` ending at `current` starts from: the newest of `ring`
// (oldest first; `current` not in it) taken at least `length` before `current`, or the oldest
// when the ring is younger than the window. nullptr when nothing was taken before `current`.
const Snapshot* window_start(const std::vector<SnapshotPtr>& ring, const Snapshot& current,
                             std::chrono::milliseconds length);

// Seconds from `start` to `current` (0 when not after it).
double seconds_between(const Snapshot& start, const Snapshot& current);

// (value(current) - value(start)) per second between them; absent when either has no value,
// no time passed, or the value went down (a counter reset: a reboot of the source, not a rate).
template <class Value>
std::optional<double> rate(const Snapshot& start, const Snapshot& current, Value value) {
  const double seconds = seconds_between(start, current);
  const std::optional<double> then = value(start);
  const std::optional<double> now = value(current);
  if (seconds <= 0 || !then || !now || *now < *then) return std::nullopt;
  return (*now - *then) / seconds;
}

}  // namespace memdiag::analysis
