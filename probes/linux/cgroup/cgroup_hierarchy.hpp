// SPDX-License-Identifier: Apache-2.0
// Where this host keeps its memory cgroups, from the mount table: cgroup2 with the memory
// controller (v2), a cgroup v1 memory hierarchy (v1), or v1 memory next to a cgroup2 mount that
// still tracks PSI (hybrid). Shared by every source that names cgroups (the cgroup source, the
// eBPF reclaim-stall source), so they agree on the paths.
#pragma once

#include <string>
#include <string_view>

#include "probes/core/expected.hpp"
#include "probes/linux/kernel_file.hpp"
#include "probes/core/kernel_paths.hpp"

namespace memdiag {

enum class CgroupVersion { kV1, kV2 };

struct MemoryHierarchy {
  CgroupVersion version = CgroupVersion::kV2;
  std::string_view mode;  // "v2", "v1" or "hybrid"
  std::string root;       // the memory hierarchy's mount point (host path: under --path.sysfs)
  std::string psi_root;   // hybrid: the cgroup2 mount whose twin cgroups carry memory.pressure
  // The mount's root within the hierarchy when it is not "/": inside a container without a
  // cgroup namespace, the mount shows only the container's own cgroup and below.
  std::string root_in_hierarchy;

  bool operator==(const MemoryHierarchy&) const = default;
};

// Reads `mountinfo` (<procfs>/self/mountinfo) and finds the memory hierarchy. Mount points
// under /sys are re-rooted at `paths.sysfs`, so fixture trees work.
Expected<MemoryHierarchy> find_memory_hierarchy(const KernelPaths& paths, KernelFile& mountinfo);

}  // namespace memdiag
