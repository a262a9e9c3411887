// SPDX-License-Identifier: Apache-2.0
// parse_pressure on arbitrary bytes: no crash, and accepted averages are ratios in [0, 1]
// (the kernel prints percent; dashboards and stall verdicts assume ratios).
#include <cmath>
#include <string_view>

#include "probes/linux/node/pressure_parser.hpp"
#include "tests/fuzz/fuzz_check.hpp"

namespace {

void check_ratio(double r) {
  FUZZ_CHECK(std::isfinite(r));
  FUZZ_CHECK(r >= 0.0 && r <= 1.0);
}

void check_line(const memdiag::PsiLine& line) {
  check_ratio(line.avg10);
  check_ratio(line.avg60);
  check_ratio(line.avg300);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  const auto parsed = memdiag::parse_pressure(memdiag::fuzz::as_text(data, size));
  if (!parsed) {
    FUZZ_CHECK(!parsed.error().message.empty());
    return 0;
  }
  check_line(parsed->some);
  if (parsed->full) check_line(*parsed->full);
  return 0;
}
