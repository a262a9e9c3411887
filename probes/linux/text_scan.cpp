#include "probes/linux/text_scan.hpp"

#include <charconv>
#include <cmath>
#include <limits>

namespace memdiag::text {

Expected<std::uint64_t> parse_u64(std::string_view digits) {
  if (digits.empty()) return make_error("empty number");
  std::uint64_t value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return make_error("not a decimal number: '" + excerpt(digits) + "'");
    const std::uint64_t d = static_cast<std::uint64_t>(c - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - d) / 10) {
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

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && (is_space(s.front()) || s.front() == '\n')) s.remove_prefix(1);
  while (!s.empty() && (is_space(s.back()) || s.back() == '\n')) s.remove_suffix(1);
  return s;
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

bool next_line(std::string_view& rest, std::string_view& line) {
  if (rest.empty()) return false;
  const std::size_t nl = rest.find('\n');
  if (nl == std::string_view::npos) {
    line = rest;
    rest = {};
  } else {
    line = rest.substr(0, nl);
    rest.remove_prefix(nl + 1);
  }
  return true;
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

bool NameSet::insert(std::string_view name) {
  std::uint64_t hash = 1469598103934665603ull;  // FNV-1a
  for (char c : name) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  for (std::size_t probe = 0; probe < kSlots; ++probe) {
    std::string_view& slot = slots_[(hash + probe) & (kSlots - 1)];
    if (slot.data() == nullptr) {
      slot = name;
      return true;
    }
    if (slot == name) return false;
  }
  return false;  // unreachable while callers respect kMaxFields
}

}  // namespace memdiag::text
