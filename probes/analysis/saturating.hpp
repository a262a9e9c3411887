// SPDX-License-Identifier: Apache-2.0
// Byte counts computed in doubles (rates, sums of stat values) turned back into integers
// without undefined behaviour: a replayed recording can hold numbers no kernel gives (up to
// 2^64 - 1 in every field), and converting a double beyond the integer's range is UB.
#pragma once

#include <cmath>
#include <cstdint>

namespace memdiag::analysis {

// Rounded to the nearest integer, 0 for negative values and NaN, UINT64_MAX beyond it.
inline std::uint64_t saturating_bytes(double value) {
  if (!(value > 0)) return 0;
  const double rounded = std::nearbyint(value);
  if (rounded >= 0x1p64) return UINT64_MAX;
  return static_cast<std::uint64_t>(rounded);
}

}  // namespace memdiag::analysis
