// The log line of a verdict's transition: one structured key=value line per change of level,
// with the evidence, so `journalctl -u memdiagd` tells the story without a dashboard:
//   stall level none -> high: stall_time=0.42(>=0.3,high) direct_reclaim=0.35(>=0.3,high) signals=psi,vmstat,ebpf window=2.0s
#pragma once

#include <string>

#include "probes/core/stall_verdict.hpp"

namespace memdiag {

std::string describe_stall_transition(VerdictLevel from, const StallVerdict& to);

}  // namespace memdiag
