// SPDX-License-Identifier: Apache-2.0
#include "probes/analysis/stall_persistence.hpp"

#include <algorithm>

namespace memdiag::analysis {

namespace {
constexpr std::size_t kMinSubIntervals = 3;
constexpr double kWholeWindow = 0.9;  // of the long window: sampling jitter leaves it a little short
}

StallPersistenceFigures StallPersistence::update(std::chrono::system_clock::time_point at,
                                                 std::optional<double> total_seconds, double present_ratio,
                                                 std::chrono::milliseconds sustain,
                                                 std::chrono::milliseconds long_window) {
  StallPersistenceFigures out;
  // A missing measure, a clock stepped back or a counter reset (the cgroup was re-created):
  // start again rather than read a wrong share.
  if (!total_seconds || (!points_.empty() && (points_.back().at >= at || points_.back().total > *total_seconds))) {
    points_.clear();
  }
  if (!total_seconds) return out;
  points_.push_back({at, *total_seconds});
  const auto keep = std::max(long_window, sustain);
  // Keep one point at or beyond the window's start, so the window is covered whole.
  while (points_.size() > 2 && at - points_[1].at >= keep) points_.pop_front();

  const auto seconds = [](auto d) { return std::chrono::duration<double>(d).count(); };
  // Only over a whole long window: over the first seconds of a series, a burst would be most of
  // a short span, read without the brief cap.
  if (points_.size() >= 2) {
    const Point& first = points_.front();
    const double span = seconds(at - first.at);
    if (span > 0 && span >= kWholeWindow * seconds(long_window)) out.long_ratio = (*total_seconds - first.total) / span;
  }
  // The newest sub-intervals that span `sustain`, at least kMinSubIntervals of them.
  std::size_t intervals = 0;
  double lowest_newest = 1e300;
  bool present = true;
  for (std::size_t i = points_.size() - 1; i > 0; --i) {
    const double dt = seconds(points_[i].at - points_[i - 1].at);
    const double share = dt > 0 ? (points_[i].total - points_[i - 1].total) / dt : 0;
    ++intervals;
    present = present && share >= present_ratio;
    const bool enough = intervals >= kMinSubIntervals && at - points_[i - 1].at >= sustain;
    if (!enough) lowest_newest = std::min(lowest_newest, share);  // the oldest only has to be present
    if (enough) {
      if (present) out.sustained_ratio = lowest_newest;
      break;
    }
    if (!present) break;
  }
  return out;
}

}  // namespace memdiag::analysis
