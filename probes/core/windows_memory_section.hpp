// What Windows says of its memory beyond the OS-neutral SystemMemory (issue 15): the commit
// peak, the system cache, the kernel pools and the system's counts, from GetPerformanceInfo and
// GlobalMemoryStatusEx (windows/performance_info). Plain numbers in bytes; a value Windows (or
// wine, which leaves some at 0: PLATFORM.md) does not give is 0 or absent as marked.
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

  bool operator==(const WindowsMemorySection&) const = default;
};

}  // namespace memdiag
