// SPDX-License-Identifier: Apache-2.0
#include "probes/analysis/level_hold.hpp"

#include <algorithm>

namespace memdiag::analysis {

VerdictLevel LevelHold::update(std::chrono::system_clock::time_point at, VerdictLevel instant,
                               std::chrono::milliseconds hold) {
  // A clock stepped back (or a sample out of order) would keep a stale level forever: forget.
  if (!recent_.empty() && recent_.back().first > at) recent_.clear();
  // Only a change of level needs remembering: a run of equal levels is its newest sample.
  while (!recent_.empty() && recent_.back().second <= instant) recent_.pop_back();
  recent_.emplace_back(at, instant);
  while (at - recent_.front().first > hold) recent_.pop_front();
  VerdictLevel level = instant;
  for (const auto& [when, past] : recent_) level = std::max(level, past);
  return level;
}

}  // namespace memdiag::analysis
