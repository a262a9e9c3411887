// SPDX-License-Identifier: Apache-2.0
// The canary source's options (`sources.canary` in the config): the daemon's page-fault canary
// and optional ones inside chosen cgroups, each a child process.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace memdiag {

struct CanarySettings {
  std::chrono::milliseconds interval{10000};
  std::size_t working_set_bytes = 16u << 20;
  std::size_t ceiling_bytes = 64u << 20;
  double backoff_psi_full = 10.0;    // percent, node memory PSI full avg10
  std::vector<std::string> cgroups;  // memory cgroup paths to run a child canary in
  // The least time between two starts of a canary's child process (one that exits is started
  // again after this): a child that cannot live must not become a fork loop.
  std::chrono::milliseconds restart_after{60000};
  bool operator==(const CanarySettings&) const = default;
};

}  // namespace memdiag
