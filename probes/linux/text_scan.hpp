// Small building blocks shared by the kernel-text parsers. Pure: no I/O, no allocation
// except for error messages.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "probes/core/expected.hpp"

namespace memdiag::text {

// Unsigned decimal, digits only; overflow beyond 2^64-1 is an error, not a wrap.
Expected<std::uint64_t> parse_u64(std::string_view digits);

// Signed decimal (sysctls such as vm.overcommit_kbytes are longs).
Expected<std::int64_t> parse_i64(std::string_view digits);

// Decimal fraction as the kernel prints it ("12.34"); rejects exponents, inf and nan.
Expected<double> parse_decimal(std::string_view digits);

inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && (is_space(s.front()) || s.front() == '\n')) s.remove_prefix(1);
  while (!s.empty() && (is_space(s.back()) || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

// Splits off the next whitespace-separated token, advancing `rest`.
std::string_view next_token(std::string_view& rest);

// Splits off the next line (without '\n'), advancing `rest`. Returns false at the end.
bool next_line(std::string_view& rest, std::string_view& line);

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

}  // namespace memdiag::text
