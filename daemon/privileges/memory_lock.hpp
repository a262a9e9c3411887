// SPDX-License-Identifier: Apache-2.0
// Keeping the daemon's own memory resident, so it answers while its node (or its own memory
// cgroup) reclaims: a scrape that has to fault its code or its buffers back in waits behind the
// very reclaim it is meant to report.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace memdiag::privileges {

struct MemoryLock {
  bool locked = false;
  // Why not, when not locked and it was asked for ("" when asked not to lock).
  std::string why_not;
  // Whether the lock rests on CAP_IPC_LOCK (a finite RLIMIT_MEMLOCK): then that capability must
  // stay, or the next mapping the daemon makes fails.
  bool needs_ipc_lock = false;
};

// mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT): every page the daemon has touched, or will,
// stays resident; mappings are not populated up front, so an 8 MiB thread stack costs what it
// uses. Only with CAP_IPC_LOCK or an unlimited RLIMIT_MEMLOCK: under a finite limit MCL_FUTURE
// would make mappings beyond it fail. Also keeps glibc from handing freed heap back to the kernel
// (and taking it again, faulting, on the next scrape): large buffers come from the locked heap.
MemoryLock lock_daemon_memory();

// The daemon's resident locked memory ("Locked:" of /proc/self/smaps_rollup, in bytes); empty
// when it cannot be read.
std::optional<std::uint64_t> locked_resident_bytes(const std::string& procfs = "/proc");

// The "Locked:" figure of smaps_rollup text, in bytes.
std::optional<std::uint64_t> parse_locked_bytes(std::string_view smaps_rollup);

}  // namespace memdiag::privileges
