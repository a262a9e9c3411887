// SPDX-License-Identifier: Apache-2.0
// The number parsers every kernel-file parser is built on, checked against the standard
// library's std::from_chars / strtod as reference implementations, plus the tokenizers.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "probes/linux/text_scan.hpp"
#include "tests/fuzz/fuzz_check.hpp"

namespace text = memdiag::text;

namespace {

// Reference: from_chars must consume the whole input to count as a number.
template <class Int>
bool reference_int(std::string_view s, Int& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

// parse_u64 / parse_i64 accept exactly what from_chars accepts (digits, '-' for signed,
// no '+', no spaces), with the same value; overflow is an error, never a wrap.
void check_integers(std::string_view s) {
  std::uint64_t u = 0;
  const bool u_ok = reference_int(s, u);
  const auto parsed_u = text::parse_u64(s);
  FUZZ_CHECK(parsed_u.ok() == u_ok);
  if (u_ok) FUZZ_CHECK(*parsed_u == u);

  std::int64_t i = 0;
  const bool i_ok = reference_int(s, i);
  const auto parsed_i = text::parse_i64(s);
  FUZZ_CHECK(parsed_i.ok() == i_ok);
  if (i_ok) FUZZ_CHECK(*parsed_i == i);
}

// parse_decimal: digits and at most one '.', value as strtod reads it. Shorter than 300
// characters a well-formed number cannot overflow or underflow a double, so it must parse.
void check_decimal(std::string_view s) {
  std::size_t digits = 0, dots = 0;
  for (char c : s) {
    if (c >= '0' && c <= '9') ++digits;
    else if (c == '.') ++dots;
  }
  const bool well_formed = digits > 0 && dots <= 1 && digits + dots == s.size();
  const auto parsed = text::parse_decimal(s);
  if (parsed) {
    FUZZ_CHECK(well_formed);
    FUZZ_CHECK(std::isfinite(*parsed) && *parsed >= 0);
    const std::string copy(s);  // strtod wants a terminated string
    FUZZ_CHECK(std::strtod(copy.c_str(), nullptr) == *parsed);
  } else if (well_formed) {
    FUZZ_CHECK(s.size() >= 300);
  }
}

// next_token yields non-empty, space-free views into the input until it is exhausted;
// next_line splits on '\n' only and loses nothing.
void check_tokenizers(std::string_view s) {
  std::string_view rest = s;
  for (std::string_view token = text::next_token(rest); !token.empty(); token = text::next_token(rest)) {
    FUZZ_CHECK(memdiag::fuzz::is_within(token, s));
    for (char c : token) FUZZ_CHECK(!text::is_space(c));
  }
  FUZZ_CHECK(rest.empty());  // the empty token means "nothing but spaces was left"

  rest = s;
  std::string_view line;
  std::size_t consumed = 0;
  while (text::next_line(rest, line)) {
    FUZZ_CHECK(line.data() == s.data() + consumed);  // lines are contiguous
    FUZZ_CHECK(line.find('\n') == std::string_view::npos);
    consumed += line.size();
    if (consumed < s.size()) {
      FUZZ_CHECK(s[consumed] == '\n');  // separated by exactly one newline
      ++consumed;
    }
  }
  FUZZ_CHECK(consumed == s.size());

  const std::string_view trimmed = text::trim(s);
  FUZZ_CHECK(memdiag::fuzz::is_within(trimmed, s));
  FUZZ_CHECK(text::excerpt(s).size() <= 51);  // 48 characters and "..."
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  const std::string_view s = memdiag::fuzz::as_text(data, size);
  check_integers(s);
  check_decimal(s);
  check_tokenizers(s);
  return 0;
}
