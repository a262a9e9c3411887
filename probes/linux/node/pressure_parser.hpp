// SPDX-License-Identifier: Apache-2.0
// /proc/pressure/{memory,io,cpu} and cgroup2 *.pressure files:
//   some avg10=0.00 avg60=0.00 avg300=0.00 total=0
//   full avg10=0.00 avg60=0.00 avg300=0.00 total=0
// Kernels before 5.13 print no "full" line for cpu; both formats are accepted.
#pragma once

#include <string_view>

#include "probes/core/expected.hpp"
#include "probes/core/pressure_section.hpp"

namespace memdiag {

Expected<PsiResource> parse_pressure(std::string_view text);

}  // namespace memdiag
