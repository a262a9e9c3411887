// SPDX-License-Identifier: Apache-2.0
#include "probes/canary/cgroup_headroom.hpp"

#include <algorithm>
#include <array>
#include <charconv>

#include "probes/linux/kernel_file.hpp"

namespace memdiag::canary {

std::optional<std::uint64_t> parse_cgroup_limit(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  if (text == "max") return std::nullopt;
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  if (value >= (std::uint64_t{1} << 62)) return std::nullopt;  // v1's "unlimited"
  return value;
}

namespace {

std::optional<std::uint64_t> read_value(const std::string& path) {
  std::string buffer;
  auto text = read_file_once(path, buffer);
  if (!text) return std::nullopt;
  return parse_cgroup_limit(*text);
}

}  // namespace

std::optional<std::uint64_t> cgroup_headroom(const std::string& dir, const std::string& root, bool v2) {
  std::optional<std::uint64_t> headroom;
  std::string at = dir;
  while (at.size() > root.size() && at.compare(0, root.size(), root) == 0) {
    const auto usage = read_value(at + (v2 ? "/memory.current" : "/memory.usage_in_bytes"));
    static constexpr std::array<const char*, 2> kV2Limits = {"/memory.high", "/memory.max"};
    static constexpr std::array<const char*, 1> kV1Limits = {"/memory.limit_in_bytes"};
    std::optional<std::uint64_t> limit;
    const auto take = [&](const char* file) {
      if (auto l = read_value(at + file)) limit = limit ? std::min(*limit, *l) : *l;
    };
    if (v2) {
      for (const char* file : kV2Limits) take(file);
    } else {
      for (const char* file : kV1Limits) take(file);
    }
    if (usage && limit) {
      const std::uint64_t left = *limit > *usage ? *limit - *usage : 0;
      headroom = headroom ? std::min(*headroom, left) : left;
    }
    at.resize(at.rfind('/'));
  }
  return headroom;
}

}  // namespace memdiag::canary
