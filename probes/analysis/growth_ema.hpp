// SPDX-License-Identifier: Apache-2.0
// How fast a footprint grows, smoothed: an exponential moving average of its rate of change
// with a half-life (oomd smooths growth the same way, so one burst between two samples does
// not make a job the cause). Shared by the cgroup members (cgroup_figures.cpp) and the
// processes of a scope (process_members.cpp).
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>

namespace memdiag::analysis {

class GrowthEma {
 public:
  // Takes the footprint at `now` and returns the smoothed growth in bytes a second: 0 at the
  // first reading; a reading at the same time changes nothing; one from before the last (the
  // wall clock stepped back) starts afresh from it, rather than freezing until the clock catches
  // up and then reading all that time's change as one sample's growth.
  double update(std::chrono::system_clock::time_point now, std::uint64_t footprint_bytes,
                std::chrono::milliseconds half_life) {
    if (seen_ && now == at_) return ema_;
    if (seen_ && now > at_) {
      const double dt = std::chrono::duration<double>(now - at_).count();
      const double instant = (static_cast<double>(footprint_bytes) - static_cast<double>(footprint_)) / dt;
      const double half_life_s = std::chrono::duration<double>(half_life).count();
      const double alpha = half_life_s > 0 ? 1 - std::exp2(-dt / half_life_s) : 1;
      ema_ += alpha * (instant - ema_);
    } else {
      ema_ = 0;
    }
    seen_ = true;
    at_ = now;
    footprint_ = footprint_bytes;
    return ema_;
  }

  double bytes_per_second() const { return ema_; }

 private:
  bool seen_ = false;
  std::chrono::system_clock::time_point at_{};
  std::uint64_t footprint_ = 0;
  double ema_ = 0;
};

}  // namespace memdiag::analysis
