// SPDX-License-Identifier: Apache-2.0
#include "probes/analysis/fault_baseline.hpp"

#include <cmath>

namespace memdiag::analysis {

namespace {
// Once warm, each calm cycle moves the baseline by this share: slow enough that a run of
// slightly slow calm cycles (a busier host) drifts it, fast enough to follow a host's change
// within a few minutes of calm.
constexpr double kBaselineWeight = 0.1;
}  // namespace

std::optional<double> FaultBaseline::update(const CanaryReading& reading, std::chrono::system_clock::time_point now,
                                            bool calm) {
  const std::uint64_t count = reading.page_fault.count;
  const std::uint64_t sum = reading.page_fault.sum_ns;
  // A restarted canary child starts its counts afresh: start from what it has.
  if (!seen_ || count < last_count_ || sum < last_sum_ns_) {
    seen_ = true;
    last_count_ = count;
    last_sum_ns_ = sum;
  } else if (count > last_count_) {
    const double mean_ns = static_cast<double>(sum - last_sum_ns_) / static_cast<double>(count - last_count_);
    last_count_ = count;
    last_sum_ns_ = sum;
    if (mean_ns > 0) {
      if (calm_cycles_ >= kCalmCyclesNeeded) {
        ratio_ = mean_ns / std::exp(log_baseline_);
        ratio_at_ = now;
      }
      if (calm) {
        const double weight = calm_cycles_ < kCalmCyclesNeeded ? 1.0 / (calm_cycles_ + 1) : kBaselineWeight;
        log_baseline_ += weight * (std::log(mean_ns) - log_baseline_);
        ++calm_cycles_;
      }
    }
  }
  if (ratio_ && now - ratio_at_ > kRatioLifetime) ratio_.reset();
  return ratio_;
}

std::optional<double> FaultBaseline::baseline_ns() const {
  if (calm_cycles_ < kCalmCyclesNeeded) return std::nullopt;
  return std::exp(log_baseline_);
}

}  // namespace memdiag::analysis
