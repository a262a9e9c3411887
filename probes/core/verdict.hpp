// SPDX-License-Identifier: Apache-2.0
// The vocabulary of every verdict memdiag gives (the overcommit risk now, the stall level
// next): a level a person can sort by and an alert can compare against, and the reasons behind
// it, each with the number that crossed a threshold and the threshold it crossed, so a verdict
// can always be checked by hand.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace memdiag {

enum class VerdictLevel : std::uint8_t { kNone = 0, kLow = 1, kMedium = 2, kHigh = 3, kCritical = 4 };

inline constexpr std::array<std::string_view, 5> kVerdictLevelNames = {"none", "low", "medium", "high", "critical"};

inline constexpr std::string_view to_string(VerdictLevel level) {
  return kVerdictLevelNames[static_cast<std::size_t>(level)];
}

// Why a verdict is what it is. `code` is one of the model's fixed reason codes (static
// storage); `value` is the figure, `threshold` the bound it reached, and `level` what that
// reason alone makes of the verdict. A verdict's level is the highest of its reasons'.
struct VerdictReason {
  std::string_view code;
  double value = 0;
  double threshold = 0;
  VerdictLevel level = VerdictLevel::kNone;
  bool operator==(const VerdictReason&) const = default;
};

// Thresholds for the levels low, medium, high and critical of one figure, in that order; a
// figure reaching thresholds[i] is at least level i + 1. Ascending.
using LevelThresholds = std::array<double, 4>;

// The level a figure reaches against ascending thresholds; kNone below the first.
inline constexpr VerdictLevel level_reached(double value, const LevelThresholds& thresholds) {
  VerdictLevel level = VerdictLevel::kNone;
  for (std::size_t i = 0; i < thresholds.size(); ++i) {
    if (value >= thresholds[i]) level = static_cast<VerdictLevel>(i + 1);
  }
  return level;
}

}  // namespace memdiag
