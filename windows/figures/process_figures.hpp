// SPDX-License-Identifier: Apache-2.0
// From what EnumProcesses + GetProcessMemoryInfo report per process to the OS-neutral
// ProcessMemorySection, with the same bounds as on Linux: the top N by working set,
// the top N by private bytes (the process's commit charge: what counts against the commit
// limit), and the daemon itself. Pure: the Win32 source (windows/process_memory) only copies
// PROCESS_MEMORY_COUNTERS_EX(2) fields into ProcessCounters.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "probes/core/process_memory_section.hpp"

namespace memdiag::windows {

struct ProcessCounters {
  std::uint32_t pid = 0;
  std::string image_name;  // "python.exe"; "" when the process could not be named
  std::uint64_t working_set_bytes = 0;
  std::uint64_t peak_working_set_bytes = 0;
  std::uint64_t private_bytes = 0;  // PrivateUsage: its commit charge
  // PROCESS_MEMORY_COUNTERS_EX2 (Windows 10 21H2 and later): the private part of the working
  // set. Absent on older systems and under wine.
  std::optional<std::uint64_t> private_working_set_bytes;
  std::uint64_t page_faults = 0;  // PageFaultCount: soft and hard
};

struct ProcessSelection {
  std::size_t top_n = 10;
  std::uint32_t self_pid = 0;
};

// `all`: every process read this time; `listed`: every pid EnumProcesses listed (some cannot be
// opened: protected processes, ones that exited meanwhile).
//
// ProcessMemory from Windows's terms: resident = the working set; committed_private = private
// bytes; unbacked_promise = private bytes less the private working set (charged, not in
// memory: never touched, or in the page file) where EX2 gives it; swap and virtual size are 0
// (GetProcessMemoryInfo has neither); map_areas absent (Windows has no map-count limit).
ProcessMemorySection process_memory(const std::vector<ProcessCounters>& all, std::size_t listed,
                                    const ProcessSelection& selection);

}  // namespace memdiag::windows
