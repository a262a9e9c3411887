// SPDX-License-Identifier: Apache-2.0
// Severity by time lost: how long a stall has lasted, from a cumulative stall-time counter
// (PSI some or full `total`, or the eBPF stall seconds) read once per sample.
//
// The stall model's window (2 s) alone cannot tell a sustained stall from a burst: half a second
// of reclaim by a single task is 25 % of a 2 s window, "high" by PSI full's thresholds, and the
// hold would then keep that for 10 s. So each measure is also read two longer ways:
// - sustained: the stall was present (at the low threshold) in each of the last sub-intervals
//   between samples spanning `sustain` (at least three of them); its share is then the lowest of
//   the newest of them (the oldest may have caught only the stall's start). A burst shorter than
//   two sample intervals cannot be present in three, so it is never "sustained";
// - long: the share of the longer window (10 s), once a whole one is seen: recurring bursts read
//   by the time they take. After a sustained stall ends it eases over that window.
// The stall model gives a stall the highest of the levels of these two, and of the window's
// share capped at low (a burst is worth saying, not paging for). A sustained stall reaches
// its level after `sustain` plus up to one sample interval (3 s at the default 1 s sampling).
#pragma once

#include <chrono>
#include <deque>
#include <optional>

#include "probes/core/stall_verdict.hpp"

namespace memdiag::analysis {

class StallPersistence {
 public:
  // `total_seconds`: the counter now (absent: the measure is missing; everything is forgotten).
  // `present_ratio`: the share of a sub-interval at which the stall counts as present.
  StallPersistenceFigures update(std::chrono::system_clock::time_point at, std::optional<double> total_seconds,
                                 double present_ratio, std::chrono::milliseconds sustain,
                                 std::chrono::milliseconds long_window);

 private:
  struct Point {
    std::chrono::system_clock::time_point at;
    double total;
  };
  std::deque<Point> points_;  // within the long window (and the sustain span), oldest first
};

}  // namespace memdiag::analysis
