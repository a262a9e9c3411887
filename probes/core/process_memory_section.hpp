// SPDX-License-Identifier: Apache-2.0
// Per-process memory in terms every platform has, for the processes a source selected (the
// largest, the nearest a limit, the daemon itself): resident memory (Windows: the working set),
// swap (Windows: page-file backed private bytes), virtual size, and the number of mappings where
// the system counts them (Linux VMAs against vm.max_map_count). Linux fills it from the process
// scan; the Linux-shaped detail (RSS by kind, map-count ratios, per-cgroup sums) stays in the
// process section.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memdiag {

struct ProcessMemory {
  int pid = 0;
  std::string name;  // the command name (Linux comm, Windows image name)
  std::uint64_t resident_bytes = 0;
  std::uint64_t swap_bytes = 0;
  std::uint64_t virtual_bytes = 0;
  std::optional<std::uint32_t> map_areas;  // where the system counts mappings
  // The private memory the process has been promised, and the part of it not backed by
  // memory (an estimate). Linux: VmData + VmStk, and that less RssAnon and VmSwap,
  // floored at 0 (see ProcessMaps). Windows will fill them from PROCESS_MEMORY_COUNTERS_EX2:
  // PrivateUsage (the process's commit charge) and PrivateUsage - PrivateWorkingSetSize (the
  // charge not in the working set; it still holds what sits in the page file, which the Linux
  // figure subtracts as swap). Absent where the system has no such count.
  std::optional<std::uint64_t> committed_private_bytes;
  std::optional<std::uint64_t> unbacked_promise_bytes;
  // Where the system keeps them (Windows: PeakWorkingSetSize and PageFaultCount, soft and hard
  // faults alike; wine leaves the count at 0).
  std::optional<std::uint64_t> peak_resident_bytes;
  std::optional<std::uint64_t> page_faults_total;

  bool operator==(const ProcessMemory&) const = default;
};

struct ProcessMemorySection {
  std::vector<ProcessMemory> processes;  // the selected ones, by pid
  std::size_t total_processes = 0;       // every process the scan saw

  bool operator==(const ProcessMemorySection&) const = default;
};

}  // namespace memdiag
