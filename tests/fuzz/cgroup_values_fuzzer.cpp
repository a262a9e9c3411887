// SPDX-License-Identifier: Apache-2.0
// parse_cgroup_u64 and parse_cgroup_limit on arbitrary bytes, against a reference reading of
// the format: exactly "<digits>\n" (std::from_chars for the value) or, for limits, "max\n";
// limits at or above kCgroupV1Unlimited are unlimited, so no 2^63 ever reaches a metric.
#include <charconv>
#include <cstdint>
#include <string_view>

#include "probes/linux/cgroup/cgroup_values.hpp"
#include "tests/fuzz/fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  const std::string_view text = memdiag::fuzz::as_text(data, size);

  bool well_formed = text.size() >= 2 && text.back() == '\n';
  std::string_view body = well_formed ? text.substr(0, text.size() - 1) : std::string_view{};
  for (char c : body) well_formed = well_formed && c >= '0' && c <= '9';
  std::uint64_t value = 0;
  if (well_formed) {
    const auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), value);
    well_formed = ec == std::errc() && end == body.data() + body.size();
  }

  const auto u = memdiag::parse_cgroup_u64(text);
  FUZZ_CHECK(u.ok() == well_formed);
  if (u) FUZZ_CHECK(*u == value);
  else FUZZ_CHECK(!u.error().message.empty());

  const auto limit = memdiag::parse_cgroup_limit(text);
  if (text == "max\n") {
    FUZZ_CHECK(limit.ok() && !limit->has_value());
    return 0;
  }
  FUZZ_CHECK(limit.ok() == well_formed);
  if (!limit) {
    FUZZ_CHECK(!limit.error().message.empty());
    return 0;
  }
  if (value >= memdiag::kCgroupV1Unlimited) {
    FUZZ_CHECK(!limit->has_value());
  } else {
    FUZZ_CHECK(limit->has_value() && **limit == value);
  }
  return 0;
}
