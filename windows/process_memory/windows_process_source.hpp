// SPDX-License-Identifier: Apache-2.0
// The windows_processes source: every process's memory counters (EnumProcesses +
// GetProcessMemoryInfo with PROCESS_MEMORY_COUNTERS_EX2 where the system has it, EX before),
// the top N by working set and by private bytes and the daemon itself kept
// (windows/figures/process_figures.hpp), into the OS-neutral ProcessMemorySection.
#pragma once

#include <cstddef>

#include "probes/core/source_registration.hpp"

namespace memdiag::windows {

struct WindowsProcessOptions {
  long long top_n = 10;  // by working set, and separately by private bytes (0..1000)
  bool operator==(const WindowsProcessOptions&) const = default;
};

SourceRegistration windows_processes_registration();

}  // namespace memdiag::windows
