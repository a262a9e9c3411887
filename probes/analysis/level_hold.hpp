// SPDX-License-Identifier: Apache-2.0
// The hysteresis of a verdict's level: rising is immediate, falling waits. The level given is
// the highest instant level of the last `hold`, so a stall that pauses for a second does not
// flap the level, and once the pressure ends the level falls to none `hold` later.
#pragma once

#include <chrono>
#include <deque>
#include <utility>

#include "probes/core/verdict.hpp"

namespace memdiag::analysis {

class LevelHold {
 public:
  // The level to give at `at` for this sample's `instant` level. Call in time order.
  VerdictLevel update(std::chrono::system_clock::time_point at, VerdictLevel instant,
                      std::chrono::milliseconds hold);

 private:
  std::deque<std::pair<std::chrono::system_clock::time_point, VerdictLevel>> recent_;  // within hold
};

}  // namespace memdiag::analysis
