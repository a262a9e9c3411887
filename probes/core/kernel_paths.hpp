// SPDX-License-Identifier: Apache-2.0
// Where a Linux host's kernel file systems are mounted, for sources that read them: /proc and
// /sys normally, /host/proc in a container, a fixture tree in tests. Plain strings; a source on
// a system without them ignores them.
#pragma once

#include <string>

namespace memdiag {

struct KernelPaths {
  std::string procfs = "/proc";
  std::string sysfs = "/sys";
  bool operator==(const KernelPaths&) const = default;
};

}  // namespace memdiag
