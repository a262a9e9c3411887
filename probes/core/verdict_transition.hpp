// SPDX-License-Identifier: Apache-2.0
// A change of a stall level, as it is logged and kept for the API (`memdiagd diagnose` shows
// the timeline of the recent ones): when, which scope, from what to what, and the evidence in
// the log line's key=value form.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "probes/core/verdict.hpp"

namespace memdiag {

struct VerdictTransition {
  std::chrono::system_clock::time_point at;
  std::string scope;  // "node", or the cgroup's path
  VerdictLevel from = VerdictLevel::kNone;
  VerdictLevel to = VerdictLevel::kNone;
  std::string evidence;  // reasons with numbers, signals, top contributors (key=value)
};

// The recent transitions, oldest first, shared by every snapshot taken while they were the
// recent ones: a new list is made only when a transition happens.
using VerdictTimeline = std::shared_ptr<const std::vector<VerdictTransition>>;

}  // namespace memdiag
