// SPDX-License-Identifier: Apache-2.0
// The forecast: at the rate a scope's available memory has been falling, how long until there
// is none. A least-squares line through the samples of the last `window`, trusted only when the
// fall is clear by the fit's own measure: enough samples over at least half the window, a fit
// that explains most of the variation (R^2 >= min_fit), and a fall over the window at least
// three times the points' scatter about the line. No floor relative to the scope's size: a slow
// leak fitted cleanly is forecast however small its rate, minutes before the OOM. Otherwise
// absent: never a wild number from two noisy points. Beyond `horizon` it is absent too. What is
// fed in is the caller's: a cgroup's available memory beyond its file cache, so reclaimable cache
// filling up is never an exhaustion.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <optional>
#include <utility>

namespace memdiag::analysis {

struct ForecastSettings {
  std::chrono::milliseconds window{60000};
  double min_fit = 0.8;
  std::chrono::milliseconds horizon{3600 * 1000};
  bool operator==(const ForecastSettings&) const = default;
};

// The least-squares line itself, for any figure followed over the window (available memory
// here, the backed memory that pays promises in promise_payment.hpp).
class TrendLine {
 public:
  // Adds the value at `at` (in time order); gives the line's slope, per second, when the trend
  // is clear (either way). Keeps the points of one window: a few hundred at most at the fastest
  // interval.
  std::optional<double> add(std::chrono::system_clock::time_point at, double value, const ForecastSettings& settings);

 private:
  std::deque<std::pair<std::chrono::system_clock::time_point, double>> points_;
};

class AvailableTrend {
 public:
  // Adds the available bytes at `at` (in time order) and gives the seconds until they reach 0
  // at the fitted rate, when the trend is a clear fall.
  std::optional<double> add(std::chrono::system_clock::time_point at, double available,
                            const ForecastSettings& settings);

 private:
  TrendLine line_;
};

}  // namespace memdiag::analysis
