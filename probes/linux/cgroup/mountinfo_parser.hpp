// SPDX-License-Identifier: Apache-2.0
// /proc/self/mountinfo (proc(5)): where the cgroup hierarchies are mounted, so nothing
// assumes /sys/fs/cgroup. One line per mount:
//   36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
//   id parent major:minor root mount_point mount_options [optional...] - fstype source super_options
// Paths escape space, tab, newline and backslash as \040 \011 \012 \134.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "probes/core/expected.hpp"

namespace memdiag {

struct MountEntry {
  std::string root;           // unescaped
  std::string mount_point;    // unescaped
  std::string fs_type;        // "cgroup", "cgroup2", "proc", ...
  std::string super_options;  // "rw,memory" for a v1 memory hierarchy
};

Status parse_mountinfo(std::string_view text, std::vector<MountEntry>& out);

// Where memory cgroups live on this host, as the mount table says.
struct CgroupMounts {
  std::string v1_memory;  // mount point of the cgroup v1 hierarchy with the memory controller; "" if none
  std::string v2;         // mount point of the cgroup2 (unified) hierarchy; "" if none
  // Which cgroup of the hierarchy each mount shows at its mount point: "/" on a host; the
  // container's own cgroup inside a container that has no cgroup namespace of its own.
  std::string v1_memory_root;
  std::string v2_root;
};

// The first v1 mount whose super options list "memory", and the first cgroup2 mount.
// Whether the cgroup2 hierarchy has the memory controller is not in mountinfo: the caller
// reads <v2>/cgroup.controllers.
CgroupMounts find_cgroup_mounts(const std::vector<MountEntry>& mounts);

}  // namespace memdiag
