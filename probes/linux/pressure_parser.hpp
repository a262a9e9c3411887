// /proc/pressure/{memory,io,cpu} and cgroup2 *.pressure files:
//   some avg10=0.00 avg60=0.00 avg300=0.00 total=0
//   full avg10=0.00 avg60=0.00 avg300=0.00 total=0
// Kernels before 5.13 print no "full" line for cpu; both formats are accepted.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "probes/core/expected.hpp"

namespace memdiag {

struct PsiLine {
  double avg10 = 0;   // ratio 0..1 (the kernel prints percent)
  double avg60 = 0;
  double avg300 = 0;
  std::uint64_t total_us = 0;  // cumulative stall time in microseconds
};

struct PsiResource {
  PsiLine some;
  std::optional<PsiLine> full;
};

Expected<PsiResource> parse_pressure(std::string_view text);

}  // namespace memdiag
