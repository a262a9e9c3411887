// Small building blocks shared by the kernel-text parsers. Pure: no I/O, no allocation
// except for error messages.
#pragma once

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

bool is_space(char c);
std::string_view trim(std::string_view s);

// Splits off the next whitespace-separated token, advancing `rest`.
std::string_view next_token(std::string_view& rest);

// Splits off the next line (without '\n'), advancing `rest`. Returns false at the end.
bool next_line(std::string_view& rest, std::string_view& line);

// A short, printable excerpt of untrusted input for an error message.
std::string excerpt(std::string_view s);

// "line N: <what>" with an excerpt of the offending line.
Error line_error(std::size_t line_number, std::string_view line, std::string_view what);

}  // namespace memdiag::text

#include <array>

namespace memdiag::text {

// Most fields a kernel name/value file may have before we call it garbage; real kernels
// have ~60 meminfo and ~200 vmstat fields.
inline constexpr std::size_t kMaxFields = 512;

// Remembers names seen in one parse to reject duplicates, without heap allocation:
// open addressing over a fixed table twice the field limit.
class NameSet {
 public:
  // False if `name` was already inserted.
  bool insert(std::string_view name);

 private:
  static constexpr std::size_t kSlots = 2 * kMaxFields;
  std::array<std::string_view, kSlots> slots_{};
};

}  // namespace memdiag::text
