// SPDX-License-Identifier: Apache-2.0
// What Windows says of its memory beyond the OS-neutral SystemMemory: the commit
// peak, the system cache, the kernel pools and the system's counts, from GetPerformanceInfo and
// GlobalMemoryStatusEx (windows/performance_info). Plain numbers in bytes; a value Windows (or
// wine, which leaves some at 0) does not give is 0 or absent as marked.
#pragma once

#include <cstdint>
#include <optional>

namespace memdiag {

struct WindowsMemorySection {
  std::uint64_t commit_peak_bytes = 0;  // the highest commit charge since boot (wine: 0)
  std::uint64_t system_cache_bytes = 0;  // the system working set: file cache and more (wine: 0)
  std::uint64_t kernel_paged_pool_bytes = 0;
  std::uint64_t kernel_nonpaged_pool_bytes = 0;
  // GlobalMemoryStatusEx's dwMemoryLoad: the share of physical memory in use, 0..100 (absent
  // when that call failed).
  std::optional<std::uint32_t> memory_load_percent;
  std::uint32_t processes = 0;
  std::uint32_t threads = 0;
  std::uint32_t handles = 0;
  // The low-memory resource notification (CreateMemoryResourceNotification): whether it is
  // signaled now, and how many times it turned signaled since the daemon started (watched by a
  // thread, so a short episode between two samples still counts). Absent when it could not be
  // created.
  std::optional<bool> low_memory;
  std::uint64_t low_memory_signals_total = 0;

  bool operator==(const WindowsMemorySection&) const = default;
};

// Windows's paging counters from PDH (windows/paging), raw and cumulative like the kernel's
// vmstat counters, so the rates come from the snapshot ring as on Linux. Each is absent when
// its counter is missing (a trimmed PDH registry; wine has none).
struct WindowsPagingSection {
  std::optional<std::uint64_t> page_faults_total;   // \Memory\Page Faults/sec: soft and hard
  std::optional<std::uint64_t> hard_faults_total;   // \Memory\Page Reads/sec: reads from disk to resolve faults
  std::optional<std::uint64_t> pages_input_total;   // \Memory\Pages Input/sec: pages those reads brought in
  std::optional<std::uint64_t> pages_output_total;  // \Memory\Pages Output/sec: pages written out to free memory

  bool operator==(const WindowsPagingSection&) const = default;
};

}  // namespace memdiag
