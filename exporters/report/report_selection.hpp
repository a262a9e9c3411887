// SPDX-License-Identifier: Apache-2.0
// What the diagnosis report shows of a snapshot, chosen once for the JSON and the text alike:
// the stalling cgroup scopes, the top promise holders, the transitions within --since.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "probes/core/snapshot.hpp"

namespace memdiag::report {

inline constexpr std::size_t kTopPromiseHolders = 5;

// Cgroup scopes whose level (held or instant) is above none, most severe first.
std::vector<const CgroupScope*> stalling_scopes(const Snapshot& snapshot);
// The processes and cgroups holding the largest unbacked promises (at most kTopPromiseHolders,
// none holding nothing), largest first.
std::vector<const SelectedProcess*> top_promise_processes(const ProcessSection& processes);
std::vector<const CgroupProcessTotals*> top_promise_cgroups(const ProcessSection& processes);
// The timeline's transitions at most `since` before the snapshot (all without), oldest first.
std::vector<const VerdictTransition*> recent_transitions(const Snapshot& snapshot,
                                                         std::optional<std::chrono::milliseconds> since);

// 2026-12-02T03:40:12.345Z
std::string iso8601(std::chrono::system_clock::time_point at);

}  // namespace memdiag::report
