// SPDX-License-Identifier: Apache-2.0
// Small building blocks shared by the kernel-text parsers. Pure: no I/O, no allocation
// except for error messages.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "probes/core/expected.hpp"

namespace memdiag::text {

// Unsigned decimal, digits only; overflow beyond 2^64-1 is an error, not a wrap.
Expected<std::uint64_t> parse_u64(std::string_view digits);

// Signed decimal (sysctls such as vm.overcommit_kbytes are longs).
Expected<std::int64_t> parse_i64(std::string_view digits);

// Decimal fraction as the kernel prints it ("12.34"); rejects exponents, inf and nan.
Expected<double> parse_decimal(std::string_view digits);

inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// A line (no '\n') of nothing but white space, which the parsers skip. Cheaper than
// trim(line).empty(): a real line is told apart by its first character.
inline bool is_blank(std::string_view line) {
  for (char c : line) {
    if (!is_space(c)) return false;
  }
  return true;
}

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && (is_space(s.front()) || s.front() == '\n')) s.remove_prefix(1);
  while (!s.empty() && (is_space(s.back()) || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

// Splits off the next whitespace-separated token, advancing `rest`.
std::string_view next_token(std::string_view& rest);

// Splits off the next line (without '\n'), advancing `rest`. Returns false at the end.
// Inline: it runs once per line of every file of every sample, and a call keeps the caller's
// line and counters out of registers.
inline bool next_line(std::string_view& rest, std::string_view& line) {
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

// The kernel ends every line of its text files with '\n': input that does not was cut short
// (a truncated copy, a read that stopped early), and its last value cannot be trusted.
Status require_final_newline(std::string_view text);

// A short, printable excerpt of untrusted input for an error message.
std::string excerpt(std::string_view s);

// "line N: <what>" with an excerpt of the offending line.
Error line_error(std::size_t line_number, std::string_view line, std::string_view what);

}  // namespace memdiag::text

namespace memdiag::text {

// [A-Za-z0-9_]: the characters of kernel field names, as a table because the test runs for
// every character of every name of every sample.
inline constexpr std::array<bool, 256> kWordChar = [] {
  std::array<bool, 256> table{};
  for (int c = 0; c < 256; ++c) {
    table[c] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  }
  return table;
}();
inline bool is_word_char(char c) { return kWordChar[static_cast<unsigned char>(c)]; }

// Most fields a kernel name/value file may have before we call it garbage; real kernels
// have ~60 meminfo and ~200 vmstat fields.
inline constexpr std::size_t kMaxFields = 512;

// Remembers the names seen in one parse to reject duplicates, without heap allocation:
// open addressing over indices into the caller's entries (2 KiB to clear per parse).
class NameSet {
 public:
  // `name_at(i)` returns the name of the i-th entry inserted before. False if `name` is one.
  template <class NameAt>
  bool insert(std::string_view name, std::size_t index, NameAt name_at) {
    for (std::size_t probe = 0, h = hash(name); probe < kSlots; ++probe, ++h) {
      std::uint16_t& slot = slots_[h & (kSlots - 1)];
      if (slot == 0) {
        slot = static_cast<std::uint16_t>(index + 1);
        return true;
      }
      if (name_at(slot - 1) == name) return false;
    }
    return false;  // unreachable while callers respect kMaxFields
  }

 private:
  static std::size_t hash(std::string_view name);
  static constexpr std::size_t kSlots = 2 * kMaxFields;
  std::array<std::uint16_t, kSlots> slots_{};  // 0: empty, else entry index + 1
};

// One line of a kernel text file, as for_each_line hands it to a parser.
struct Line {
  std::size_t number;     // 1-based, blank lines counted, so errors match what `cat -n` shows
  std::string_view text;  // without its '\n'

  Error error(std::string_view what) const { return line_error(number, text, what); }
};

// How many non-blank lines a file may have, and what to say at the first one beyond: a file
// far larger than any kernel writes is garbage or hostile, and parsing it all would only grow
// the caller's tables.
struct LineLimit {
  std::size_t max_lines;
  std::string_view message;
};

// Name/value files hold one field a line.
inline constexpr LineLimit kFieldLimit{kMaxFields, "more fields than any kernel has"};

// The loop every line-oriented parser needs, so that each one holds only its format:
// refuses text without a final newline (see require_final_newline), skips blank lines, stops
// at the limit and at the first line `visit` refuses. `visit(const Line&)` returns Status;
// its error is returned as it is. The limit is checked before a line is visited, so `visit`
// may append an entry per line without its own bound. Empty text visits nothing and is Ok:
// what "no lines" means is the caller's to say.
// A template so that `visit` is inlined: this loop runs for every line of every sample.
template <class Visit>
Status for_each_line(std::string_view text, LineLimit limit, Visit&& visit) {
  if (auto st = require_final_newline(text); !st) return st;
  std::string_view rest = text;
  std::size_t visited = 0;
  Line line{0, {}};
  while (next_line(rest, line.text)) {
    ++line.number;
    if (is_blank(line.text)) continue;
    if (visited >= limit.max_lines) return line.error(limit.message);
    ++visited;
    if (Status st = visit(std::as_const(line)); !st) return st;  // const: `visit` cannot renumber
  }
  return Ok{};
}

// For formats that bound themselves (PSI files: one "some" and one "full" line at most).
template <class Visit>
Status for_each_line(std::string_view text, Visit&& visit) {
  return for_each_line(text, LineLimit{SIZE_MAX, {}}, std::forward<Visit>(visit));
}

}  // namespace memdiag::text
