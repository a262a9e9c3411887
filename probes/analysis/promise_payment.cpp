// SPDX-License-Identifier: Apache-2.0
#include "probes/analysis/promise_payment.hpp"

namespace memdiag::analysis {

std::optional<double> PaymentTrend::add(std::chrono::system_clock::time_point at, double backed,
                                        const ForecastSettings& settings) {
  const std::optional<double> slope = line_.add(at, backed, settings);
  if (!slope || *slope <= 0) return std::nullopt;
  return slope;
}

std::optional<double> promise_exhaustion_seconds(double charged_unbacked, double supply,
                                                 std::optional<double> payment_rate,
                                                 const ForecastSettings& settings) {
  if (!payment_rate || *payment_rate <= 0 || charged_unbacked <= supply) return std::nullopt;
  const double seconds = supply / *payment_rate;
  if (seconds > std::chrono::duration<double>(settings.horizon).count()) return std::nullopt;
  return seconds;
}

}  // namespace memdiag::analysis
