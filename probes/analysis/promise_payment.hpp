// SPDX-License-Identifier: Apache-2.0
// The promises being paid (the overcommit forecast): a promise is paid when a page it covers is
// touched, and that shows as the backed memory (AnonPages + Shmem + swap in use) rising. The
// unbacked figure's own fall is no measure of it: a process exiting or unmapping cancels its
// promise and pays nothing. So this follows the backed memory with the forecast's line
// (forecast.hpp: clear by its fit and its scatter) and gives its rate of rise. Flat or falling:
// absent.
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
  // rise is clear.
  std::optional<double> add(std::chrono::system_clock::time_point at, double backed, const ForecastSettings& settings);

 private:
  TrendLine line_;
};

// Seconds until payments at `rate` use up `supply`, while `charged_unbacked` (what can come due)
// exceeds it, within the forecast's horizon; absent otherwise (every promise can be paid, or
// nothing is being paid).
std::optional<double> promise_exhaustion_seconds(double charged_unbacked, double supply,
                                                 std::optional<double> payment_rate,
                                                 const ForecastSettings& settings);

}  // namespace memdiag::analysis
