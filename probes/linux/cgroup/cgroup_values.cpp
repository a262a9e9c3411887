// SPDX-License-Identifier: Apache-2.0
#include "probes/linux/cgroup/cgroup_values.hpp"

#include "probes/linux/text_scan.hpp"

namespace memdiag {
namespace {

// The one value of a single-value file, without its '\n'. The kernel writes exactly
// "<value>\n"; anything else (no newline: a cut-short read; more lines; spaces) is refused
// rather than guessed at, because a wrong limit silently skews every headroom and fill ratio.
Expected<std::string_view> single_value(std::string_view text) {
  if (text.empty()) return make_error("empty file");
  if (auto st = text::require_final_newline(text); !st) return st.error();
  const std::string_view value = text.substr(0, text.size() - 1);
  if (value.empty()) return make_error("empty value");
  if (value.find('\n') != std::string_view::npos) {
    return make_error("more than one line: '" + text::excerpt(text) + "'");
  }
  return value;
}

}  // namespace

Expected<std::uint64_t> parse_cgroup_u64(std::string_view text) {
  auto value = single_value(text);
  if (!value) return value.error();
  return text::parse_u64(*value);
}

Expected<std::optional<std::uint64_t>> parse_cgroup_limit(std::string_view text) {
  auto value = single_value(text);
  if (!value) return value.error();
  if (*value == "max") return std::optional<std::uint64_t>{};
  auto number = text::parse_u64(*value);
  if (!number) return number.error();
  // v1 has no "max": it prints PAGE_COUNTER_MAX pages in bytes, which depends on the page size.
  if (*number >= kCgroupV1Unlimited) return std::optional<std::uint64_t>{};
  return std::optional<std::uint64_t>{*number};
}

}  // namespace memdiag
