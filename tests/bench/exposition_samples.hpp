// SPDX-License-Identifier: Apache-2.0
// The number of samples in a text exposition (its lines that are not comments), which both
// benchmark binaries report next to the bytes of a scrape.
#pragma once

#include <cstddef>
#include <string_view>

namespace memdiag::bench {

inline std::size_t count_samples(std::string_view exposition) {
  std::size_t samples = 0;
  bool line_start = true;
  for (char c : exposition) {
    if (line_start && c != '#') ++samples;
    line_start = c == '\n';
  }
  return samples;
}

}  // namespace memdiag::bench
