// SPDX-License-Identifier: Apache-2.0
// What a person on call can do about a diagnosis, concretely: which cgroup to stop or limit
// (and whether that frees enough), which knob to turn, which one-liner traces the cause further.
// Derived from the verdicts alone, so the text report, the JSON and the page say the same.
#pragma once

#include <string>
#include <vector>

#include "probes/core/snapshot.hpp"

namespace memdiag::report {

std::vector<std::string> next_steps(const Snapshot& snapshot);

// What the node's vm.overcommit_memory mode (on Windows: its always enforced commit limit) means
// for its promises, in one or two sentences.
std::string overcommit_mode_meaning(OvercommitMode mode, bool windows);

}  // namespace memdiag::report
