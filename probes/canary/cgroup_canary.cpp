// SPDX-License-Identifier: Apache-2.0
#include "probes/canary/cgroup_canary.hpp"

namespace memdiag::canary {

CgroupCanary::CgroupCanary(std::string cgroup, std::vector<std::string> cgroup_dirs, CanaryOptions options,
                           std::string program, std::chrono::milliseconds restart_after)
    : cgroup_(std::move(cgroup)), child_(std::move(options), std::move(program), std::move(cgroup_dirs), restart_after) {}

CgroupCanaryReading CgroupCanary::poll() {
  CanaryChildStatus status = child_.poll();
  CgroupCanaryReading out;
  out.cgroup = cgroup_;
  out.running = status.running;
  out.error = std::move(status.error);
  out.reading = status.report.reading;
  return out;
}

}  // namespace memdiag::canary
