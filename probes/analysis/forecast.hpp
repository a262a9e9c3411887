// The forecast (issue 14): at the rate a scope's available memory has been falling, how long
// until there is none. A least-squares line through the samples of the last `window`, trusted
// only when the fall is clear: enough samples over at least half the window, a fit that
// explains most of the variation (R^2 >= min_fit), and a fall over the window larger than the
// noise floor (1 % of the scope). Otherwise absent: never a wild number from two noisy points.
// Beyond `horizon` it is absent too (a fall that slow is no emergency, and is mostly noise).
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

class AvailableTrend {
 public:
  // Adds the available bytes at `at` (in time order) and gives the seconds until they reach 0
  // at the fitted rate, when the trend is clear. `scale` is the scope's size (for the noise
  // floor). Keeps the points of one window: a few hundred at most at the fastest interval.
  std::optional<double> add(std::chrono::system_clock::time_point at, double available, double scale,
                            const ForecastSettings& settings);

 private:
  std::deque<std::pair<std::chrono::system_clock::time_point, double>> points_;
};

}  // namespace memdiag::analysis
