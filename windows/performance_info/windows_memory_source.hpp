// SPDX-License-Identifier: Apache-2.0
// The windows_memory source: GetPerformanceInfo and GlobalMemoryStatusEx, into the
// OS-neutral SystemMemory (commit charge and limit, physical memory, the page files), the
// overcommit policy (Windows always refuses a commit beyond its limit: "never"), and the
// Windows detail (commit peak, system cache, kernel pools, counts). The derivations are in
// windows/figures/memory_figures.hpp; this file only calls Win32 and copies fields.
#pragma once

#include "probes/core/source_registration.hpp"

namespace memdiag::windows {

SourceRegistration windows_memory_registration();

}  // namespace memdiag::windows
