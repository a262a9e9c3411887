// SPDX-License-Identifier: Apache-2.0
// The vm_sysctl source: the vm.* sysctls that decide overcommit, reclaim and limits, re-read
// every `refresh_interval` (they change only by an administrator's hand), and the OS-neutral
// overcommit policy from them.
#pragma once

#include <chrono>

#include "probes/core/source_registration.hpp"

namespace memdiag {

struct VmSysctlOptions {
  // Re-read the kernel at most this often and serve the last values in between; 0 = every sample.
  std::chrono::milliseconds refresh_interval{10000};
  bool operator==(const VmSysctlOptions&) const = default;
};

SourceRegistration vm_sysctl_registration();

}  // namespace memdiag
