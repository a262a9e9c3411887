// The promises being paid (the overcommit forecast): a promise is paid when a page it covers is
// touched, and that shows as the backed memory (AnonPages + Shmem + swap in use) rising. The
// unbacked figure's own fall is no measure of it: a process exiting or unmapping cancels its
// promise and pays nothing. So this follows the backed memory with a least-squares line over
// the forecast window and gives its rate of rise when the rise is clear: enough samples over
// at least half the window, a fit that explains most of the variation (R^2 >= min_fit) and a
// rise over the window above the noise floor (1 % of the scale). Flat or falling: absent.
#pragma once

#include <chrono>
#include <deque>
#include <optional>
#include <utility>

#include "probes/analysis/forecast.hpp"

namespace memdiag::analysis {

class PaymentTrend {
 public:
  // Adds the backed bytes at `at` (in time order); the bytes per second they rise at, when the
  // rise is clear. `scale`: the node's memory (for the noise floor).
  std::optional<double> add(std::chrono::system_clock::time_point at, double backed, double scale,
                            const ForecastSettings& settings);

 private:
  std::deque<std::pair<std::chrono::system_clock::time_point, double>> points_;
};

// Seconds until payments at `rate` use up `supply`, while `charged_unbacked` (what can come due)
// exceeds it, within the forecast's horizon; absent otherwise (every promise can be paid, or
// nothing is being paid).
std::optional<double> promise_exhaustion_seconds(double charged_unbacked, double supply,
                                                 std::optional<double> payment_rate,
                                                 const ForecastSettings& settings);

}  // namespace memdiag::analysis
