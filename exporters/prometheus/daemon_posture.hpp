// SPDX-License-Identifier: Apache-2.0
// What the daemon runs with, as it reports itself: whether its memory is locked resident and how
// much, the capabilities it still holds, its user, and its process figures (process_*, as every
// Prometheus client library exports them). Filled by the daemon after each sample (Linux:
// daemon/privileges, daemon/process_self), rendered beside memdiag_build_info.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memdiag::prom {

// The daemon's own process (/proc/self/stat, its descriptors and RLIMIT_NOFILE).
struct ProcessSelf {
  double cpu_seconds = 0;          // user + system
  std::uint64_t resident_bytes = 0;
  std::uint64_t virtual_bytes = 0;
  double start_time_seconds = 0;   // Unix time
  std::optional<std::uint64_t> open_fds;
  std::optional<std::uint64_t> max_fds;
};

struct DaemonPosture {
  bool memory_locked = false;
  std::optional<std::uint64_t> locked_bytes;  // resident and locked
  std::vector<std::string> capabilities;      // effective set, e.g. "cap_sys_ptrace"
  std::optional<std::uint32_t> uid;
  std::optional<ProcessSelf> process;
};

}  // namespace memdiag::prom
