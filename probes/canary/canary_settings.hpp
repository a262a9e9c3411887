// The canary source's options (`sources.canary` in the config): the daemon's page-fault canary
// and optional ones inside chosen cgroups (issue 6).
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
  bool operator==(const CanarySettings&) const = default;
};

}  // namespace memdiag
