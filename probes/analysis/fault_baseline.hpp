// SPDX-License-Identifier: Apache-2.0
// The canary's page faults against their own calm baseline (reason `slow_faults`):
// how much slower a fresh page is handed to a thread now than when the node was calm, measured
// on this host, never a hard-coded latency (a page fault costs ~0.25 us on one machine and
// several on another). The canary (probes/canary) touches a fresh working set
// every cycle (10 s by default) and counts each first touch in its page_fault distribution; the
// mean of a cycle's faults is compared with the baseline, a running geometric mean of the
// cycles that ran while nothing stalled.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "probes/core/canary_section.hpp"

namespace memdiag::analysis {

class FaultBaseline {
 public:
  // Calm cycles before the baseline is trusted.
  static constexpr int kCalmCyclesNeeded = 3;
  // A cycle's ratio stands this long after it was seen (three default canary intervals), then
  // it is absent: an old cycle says nothing about now.
  static constexpr std::chrono::seconds kRatioLifetime{30};

  // Takes the canary's cumulative reading at `now`. `calm`: nothing stalled in this sample's
  // window, so a cycle seen now may join the baseline. Returns the ratio of the newest cycle's
  // mean fault latency to the baseline, while it stands and once the baseline is trusted.
  std::optional<double> update(const CanaryReading& reading, std::chrono::system_clock::time_point now, bool calm);

  std::optional<double> baseline_ns() const;

 private:
  std::uint64_t last_count_ = 0;
  std::uint64_t last_sum_ns_ = 0;
  bool seen_ = false;
  double log_baseline_ = 0;  // mean of log(cycle mean ns) over calm cycles (an EMA once warm)
  int calm_cycles_ = 0;
  std::optional<double> ratio_;
  std::chrono::system_clock::time_point ratio_at_;
};

}  // namespace memdiag::analysis
