// SPDX-License-Identifier: Apache-2.0
// What the daemon runs with, as it reports itself: whether its memory is locked resident and how
// much, the capabilities it still holds, and its user. Filled by the daemon (Linux:
// daemon/privileges), rendered beside memdiag_build_info.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memdiag::prom {

struct DaemonPosture {
  bool memory_locked = false;
  std::optional<std::uint64_t> locked_bytes;  // resident and locked
  std::vector<std::string> capabilities;      // effective set, e.g. "cap_sys_ptrace"
  std::optional<std::uint32_t> uid;
};

}  // namespace memdiag::prom
