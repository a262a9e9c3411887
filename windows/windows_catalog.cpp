// SPDX-License-Identifier: Apache-2.0
// The sources of a Windows build (the Linux one's list is probes/catalog/linux_catalog.cpp).
// Adding a source: its registration beside its Win32 calls, and one line here.
#include "probes/catalog/source_catalog.hpp"
#include "windows/canary/windows_canary_source.hpp"
#include "windows/performance_info/windows_memory_source.hpp"
#include "windows/paging/pdh_paging_source.hpp"
#include "windows/process_memory/windows_process_source.hpp"

namespace memdiag {

const std::vector<SourceRegistration>& source_catalog() {
  static const std::vector<SourceRegistration> kCatalog = {
      windows::windows_memory_registration(),
      windows::windows_paging_registration(),
      windows::windows_processes_registration(),
      windows::windows_canary_registration(),
  };
  return kCatalog;
}

}  // namespace memdiag
