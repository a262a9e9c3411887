#include "probes/analysis/promise_payment.hpp"

namespace memdiag::analysis {

namespace {
constexpr std::size_t kMinPoints = 5;
constexpr std::size_t kMostPoints = 600;  // 60 s at 100 ms; older points go first
constexpr double kNoiseFloorOfScale = 0.01;
}  // namespace

std::optional<double> PaymentTrend::add(std::chrono::system_clock::time_point at, double backed, double scale,
                                        const ForecastSettings& settings) {
  if (!points_.empty() && points_.back().first >= at) points_.clear();  // clock stepped back
  points_.emplace_back(at, backed);
  while (at - points_.front().first > settings.window || points_.size() > kMostPoints) points_.pop_front();
  if (points_.size() < kMinPoints) return std::nullopt;
  const double span = std::chrono::duration<double>(at - points_.front().first).count();
  if (span < std::chrono::duration<double>(settings.window).count() / 2) return std::nullopt;

  double n = 0, st = 0, sy = 0;
  for (const auto& [when, y] : points_) {
    n += 1;
    st += std::chrono::duration<double>(when - points_.front().first).count();
    sy += y;
  }
  const double mean_t = st / n, mean_y = sy / n;
  double stt = 0, sty = 0, syy = 0;
  for (const auto& [when, y] : points_) {
    const double dt = std::chrono::duration<double>(when - points_.front().first).count() - mean_t;
    const double dy = y - mean_y;
    stt += dt * dt;
    sty += dt * dy;
    syy += dy * dy;
  }
  if (stt <= 0 || syy <= 0) return std::nullopt;
  const double slope = sty / stt;  // bytes per second
  if (slope <= 0 || sty * sty / (stt * syy) < settings.min_fit) return std::nullopt;
  if (slope * span < kNoiseFloorOfScale * scale) return std::nullopt;
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
