// SPDX-License-Identifier: Apache-2.0
// A stall verdict's evidence as one key=value text, for the transition log and the timeline:
//   stall_time=0.42(>=0.3,high) direct_reclaim=0.35(>=0.3,high) signals=psi,vmstat,ebpf window=2.0s
//   contributors=/jobs/a:0.81:relief=1.2GiB victims=/jobs/b,/jobs/c
// Reasons with the figure, the threshold reached and what that reason alone makes of the level.
#pragma once

#include <cstdarg>
#include <string>

#include "probes/core/pressure_scope.hpp"
#include "probes/core/stall_verdict.hpp"

namespace memdiag::analysis {

std::string describe_evidence(const StallVerdict& verdict, const ScopeAnalysis* scope);

// printf-style text appended to `out` (at most 511 bytes of it), checked by the compiler: the
// evidence line and the text report are built with it.
__attribute__((format(printf, 2, 3))) void append_format(std::string& out, const char* format, ...);
void append_vformat(std::string& out, const char* format, va_list args);

// 1.2GiB, 512MiB, 4KiB, 12B: sizes as a person reads them.
std::string human_bytes(double bytes);

}  // namespace memdiag::analysis
