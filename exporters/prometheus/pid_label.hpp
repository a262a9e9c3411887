// SPDX-License-Identifier: Apache-2.0
// A pid as label text without allocating (the scrape path renders one per selected process).
#pragma once

#include <array>
#include <charconv>
#include <string_view>

namespace memdiag::prom {

struct PidLabel {
  std::array<char, 16> text{};
  std::string_view view;
  explicit PidLabel(int pid) {
    const auto [end, ec] = std::to_chars(text.data(), text.data() + text.size(), pid);
    view = std::string_view(text.data(), ec == std::errc() ? static_cast<std::size_t>(end - text.data()) : 0);
  }
};

}  // namespace memdiag::prom
