// SPDX-License-Identifier: Apache-2.0
#include "probes/linux/text_scan.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <cmath>
#include <limits>

namespace memdiag::text {

Expected<std::uint64_t> parse_u64(std::string_view digits) {
  if (digits.empty()) return make_error("empty number");
  // Compare against max/10 instead of dividing per digit: this loop runs ~250 times a sample.
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  constexpr std::uint64_t kLimit = kMax / 10;
  constexpr std::uint64_t kLastDigit = kMax % 10;
  std::uint64_t value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return make_error("not a decimal number: '" + excerpt(digits) + "'");
    const std::uint64_t d = static_cast<std::uint64_t>(c - '0');
    if (value > kLimit || (value == kLimit && d > kLastDigit)) {
      return make_error("number overflows 64 bits: '" + excerpt(digits) + "'");
    }
    value = value * 10 + d;
  }
  return value;
}

Expected<std::int64_t> parse_i64(std::string_view digits) {
  bool negative = false;
  if (!digits.empty() && digits.front() == '-') {
    negative = true;
    digits.remove_prefix(1);
  }
  auto magnitude = parse_u64(digits);
  if (!magnitude) return magnitude.error();
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (negative) {
    if (*magnitude > kMax + 1) return make_error("number overflows 64 bits: '-" + excerpt(digits) + "'");
    return *magnitude == kMax + 1 ? std::numeric_limits<std::int64_t>::min()
                                  : -static_cast<std::int64_t>(*magnitude);
  }
  if (*magnitude > kMax) return make_error("number overflows 64 bits: '" + excerpt(digits) + "'");
  return static_cast<std::int64_t>(*magnitude);
}

Expected<double> parse_decimal(std::string_view digits) {
  if (digits.empty()) return make_error("empty number");
  for (char c : digits) {
    if ((c < '0' || c > '9') && c != '.') {
      return make_error("not a decimal fraction: '" + excerpt(digits) + "'");
    }
  }
  double value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size() || !std::isfinite(value)) {
    return make_error("not a decimal fraction: '" + excerpt(digits) + "'");
  }
  return value;
}

std::string_view next_token(std::string_view& rest) {
  std::size_t i = 0;
  while (i < rest.size() && is_space(rest[i])) ++i;
  std::size_t j = i;
  while (j < rest.size() && !is_space(rest[j])) ++j;
  std::string_view token = rest.substr(i, j - i);
  rest.remove_prefix(j);
  return token;
}

Status require_final_newline(std::string_view text) {
  if (!text.empty() && text.back() != '\n') {
    const std::size_t last = text.rfind('\n');
    return make_error("truncated: the last line has no newline: '" +
                      excerpt(last == std::string_view::npos ? text : text.substr(last + 1)) + "'");
  }
  return Ok{};
}

std::string excerpt(std::string_view s) {
  constexpr std::size_t kMax = 48;
  std::string out;
  for (std::size_t i = 0; i < s.size() && i < kMax; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
  }
  if (s.size() > kMax) out += "...";
  return out;
}

Error line_error(std::size_t line_number, std::string_view line, std::string_view what) {
  return make_error("line " + std::to_string(line_number) + ": " + std::string(what) + " in '" +
                    excerpt(line) + "'");
}

}  // namespace memdiag::text

namespace memdiag::text {

std::size_t NameSet::hash(std::string_view name) {
  // Length and three 8-byte windows (start, middle, end): a few instructions however long the
  // name, and kernel field names sharing a prefix ("nr_zone_...") still spread. Collisions only
  // cost a string compare.
  auto load = [&name](std::size_t at) {
    std::uint64_t word = 0;
    std::memcpy(&word, name.data() + at, std::min<std::size_t>(8, name.size() - at));
    return word;
  };
  std::uint64_t h = name.size() * 0x9E3779B97F4A7C15ull;
  if (!name.empty()) {
    h ^= load(0) * 0xC2B2AE3D27D4EB4Full;
    h ^= load(name.size() / 2) * 0x165667B19E3779F9ull;
    h ^= load(name.size() > 8 ? name.size() - 8 : 0) * 0x27D4EB2F165667C5ull;
  }
  return static_cast<std::size_t>(h ^ (h >> 29));
}

}  // namespace memdiag::text
