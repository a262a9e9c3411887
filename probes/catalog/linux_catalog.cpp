// SPDX-License-Identifier: Apache-2.0
// The sources of a Linux build. Adding a source: its *_registration.cpp beside it, and one line
// here.
#include "probes/bpf/bpf_factories.hpp"
#include "probes/bpf/reclaim_stall_registration.hpp"
#include "probes/canary/canary_registration.hpp"
#include "probes/catalog/source_catalog.hpp"
#include "probes/linux/cgroup/cgroup_registration.hpp"
#include "probes/linux/node/meminfo_registration.hpp"
#include "probes/linux/node/pressure_registration.hpp"
#include "probes/linux/node/vm_sysctl_registration.hpp"
#include "probes/linux/node/vmstat_registration.hpp"
#include "probes/linux/process/process_registration.hpp"

namespace memdiag {

const std::vector<SourceRegistration>& source_catalog() {
  static const std::vector<SourceRegistration> kCatalog = {
      meminfo_registration(),
      vmstat_registration(),
      pressure_registration(),
      vm_sysctl_registration(),
      cgroup_registration(),
      reclaim_stall_registration(),
      processes_registration(&task_iterator_opener),
      canary_registration(),
  };
  return kCatalog;
}

}  // namespace memdiag
