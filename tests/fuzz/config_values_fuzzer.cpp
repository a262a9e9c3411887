// SPDX-License-Identifier: Apache-2.0
// The single-value checks shared by the YAML loader and the command-line flags.
#include <charconv>
#include <chrono>
#include <string_view>

#include "daemon/config_values.hpp"
#include "tests/fuzz/fuzz_check.hpp"

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Accepted durations are "<digits and dots><ms|s|m|h>", non-negative and bounded (the loader
// then range-checks them; an overflowed or negative value must never get that far).
void check_duration(std::string_view s) {
  const auto d = memdiag::parse_duration(s);
  if (!d) {
    FUZZ_CHECK(!d.error().message.empty());
    return;
  }
  FUZZ_CHECK(d->count() >= 0);
  FUZZ_CHECK(d->count() <= 1'000'000'000'000LL);
  std::size_t i = 0;
  while (i < s.size() && (is_digit(s[i]) || s[i] == '.')) ++i;
  const std::string_view unit = s.substr(i);
  FUZZ_CHECK(i > 0);
  FUZZ_CHECK(unit == "ms" || unit == "s" || unit == "m" || unit == "h");
}

// Accepted addresses go verbatim to the listener (daemon/http/listener.cpp), which splits them
// at the last ':' and resolves the host: they must be one address (no ','), printable without
// spaces, and end in ":PORT" with a decimal port in 1..65535 (no suffix of any kind).
void check_address(std::string_view s) {
  const auto st = memdiag::check_listen_address(s);
  if (!st) {
    FUZZ_CHECK(!st.error().message.empty());
    return;
  }
  for (char c : s) FUZZ_CHECK(c > ' ' && c < 0x7f && c != ',');
  const std::size_t colon = s.rfind(':');
  FUZZ_CHECK(colon != std::string_view::npos);
  const std::string_view port_text = s.substr(colon + 1);
  FUZZ_CHECK(!port_text.empty());
  for (char c : port_text) FUZZ_CHECK(is_digit(c));
  int port = 0;
  const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  FUZZ_CHECK(ec == std::errc() && end == port_text.data() + port_text.size());
  FUZZ_CHECK(port >= 1 && port <= 65535);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  const std::string_view s = memdiag::fuzz::as_text(data, size);
  check_duration(s);
  check_address(s);
  return 0;
}
