// SPDX-License-Identifier: Apache-2.0
// A canary inside a chosen memory cgroup: a canary child (canary_child.hpp) that moves
// into the cgroup before it execs, so its page faults are charged to and reclaimed within that
// cgroup's limit. Restarted at most once per restart_after if it exits, its predecessors' counts
// carried over.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "probes/canary/canary_child.hpp"
#include "probes/core/canary_section.hpp"

namespace memdiag::canary {

class CgroupCanary {
 public:
  // cgroup: path in the memory hierarchy ("/pod-x"); cgroup_dirs: its directories to join
  // (the v1 memory directory, and the cgroup2 twin on a hybrid host). program: the binary with
  // the --canary-child mode (canary_child_program() in memdiagd). restart_after: the least time
  // between two starts.
  CgroupCanary(std::string cgroup, std::vector<std::string> cgroup_dirs, CanaryOptions options, std::string program,
               std::chrono::milliseconds restart_after = CanaryChild::kRestartAfter);

  // Starts the child if it is not running (and may be restarted), then takes the latest
  // reading it sent.
  CgroupCanaryReading poll();

 private:
  std::string cgroup_;
  CanaryChild child_;
};

}  // namespace memdiag::canary
