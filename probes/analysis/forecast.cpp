// SPDX-License-Identifier: Apache-2.0
#include "probes/analysis/forecast.hpp"

#include <algorithm>
#include <cmath>

namespace memdiag::analysis {

namespace {
constexpr std::size_t kMinPoints = 5;
constexpr std::size_t kMostPoints = 600;  // 60 s at 100 ms; older points go first
// The change over the window must be this many times the scatter of the points about the line:
// the fit's own noise, not a share of the scope, decides whether a trend is real.
constexpr double kChangeOverScatter = 3;
}  // namespace

std::optional<double> TrendLine::add(std::chrono::system_clock::time_point at, double value,
                                     const ForecastSettings& settings) {
  if (!points_.empty() && points_.back().first >= at) points_.clear();  // clock stepped back
  points_.emplace_back(at, value);
  while (at - points_.front().first > settings.window || points_.size() > kMostPoints) points_.pop_front();
  if (points_.size() < kMinPoints) return std::nullopt;
  const double span = std::chrono::duration<double>(at - points_.front().first).count();
  const double window = std::chrono::duration<double>(settings.window).count();
  if (span < window / 2) return std::nullopt;

  // Least squares of the value over seconds since the first point.
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
  const double slope = sty / stt;  // units per second
  const double fit = sty * sty / (stt * syy);
  if (fit < settings.min_fit) return std::nullopt;
  // Residual scatter: what the line leaves unexplained, per point (n - 2 degrees of freedom).
  const double scatter = n > 2 ? std::sqrt(std::max(0.0, syy - slope * sty) / (n - 2)) : 0;
  if (std::fabs(slope) * span < kChangeOverScatter * scatter) return std::nullopt;
  return slope;
}

std::optional<double> AvailableTrend::add(std::chrono::system_clock::time_point at, double available,
                                          const ForecastSettings& settings) {
  const std::optional<double> slope = line_.add(at, available, settings);
  if (!slope || *slope >= 0) return std::nullopt;
  const double seconds = std::max(0.0, available) / -*slope;
  if (seconds > std::chrono::duration<double>(settings.horizon).count()) return std::nullopt;
  return seconds;
}

}  // namespace memdiag::analysis
