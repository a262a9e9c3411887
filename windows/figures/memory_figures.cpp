// SPDX-License-Identifier: Apache-2.0
#include "windows/figures/memory_figures.hpp"

#include <limits>
#include <string>

namespace memdiag::windows {

namespace {

// pages x page size, refusing an overflow (a garbage count would wrap to a plausible number).
std::optional<std::uint64_t> bytes(std::uint64_t pages, std::uint64_t page_size) {
  if (page_size != 0 && pages > std::numeric_limits<std::uint64_t>::max() / page_size) return std::nullopt;
  return pages * page_size;
}

}  // namespace

Expected<MemoryReading> memory_reading(const PerformanceCounts& p, const std::optional<MemoryStatusCounts>& status) {
  if (p.page_size_bytes == 0 || (p.page_size_bytes & (p.page_size_bytes - 1)) != 0) {
    return make_error("GetPerformanceInfo: page size " + std::to_string(p.page_size_bytes) + " is not a power of two");
  }
  const auto commit_total = bytes(p.commit_total_pages, p.page_size_bytes);
  const auto commit_limit = bytes(p.commit_limit_pages, p.page_size_bytes);
  const auto commit_peak = bytes(p.commit_peak_pages, p.page_size_bytes);
  auto physical_total = bytes(p.physical_total_pages, p.page_size_bytes);
  auto physical_available = bytes(p.physical_available_pages, p.page_size_bytes);
  const auto cache = bytes(p.system_cache_pages, p.page_size_bytes);
  const auto paged = bytes(p.kernel_paged_pages, p.page_size_bytes);
  const auto nonpaged = bytes(p.kernel_nonpaged_pages, p.page_size_bytes);
  if (!commit_total || !commit_limit || !commit_peak || !physical_total || !physical_available || !cache || !paged ||
      !nonpaged) {
    return make_error("GetPerformanceInfo: a page count overflows 64 bits of bytes");
  }
  if (*physical_total == 0 && status) {
    physical_total = status->total_physical_bytes;
    physical_available = status->available_physical_bytes;
  }
  if (*physical_total == 0) return make_error("GetPerformanceInfo: no physical memory");
  if (*physical_available > *physical_total) {
    return make_error("GetPerformanceInfo: " + std::to_string(*physical_available) + " bytes available of " +
                      std::to_string(*physical_total));
  }
  if (*commit_limit == 0) return make_error("GetPerformanceInfo: a commit limit of 0");
  if (status && status->memory_load_percent > 100) {
    return make_error("GlobalMemoryStatusEx: a memory load of " + std::to_string(status->memory_load_percent) + " %");
  }

  MemoryReading r;
  SystemMemory& m = r.system;
  m.physical_total_bytes = *physical_total;
  m.physical_available_bytes = *physical_available;
  m.commit_charge_bytes = *commit_total;
  m.commit_limit_bytes = *commit_limit;
  m.swap_total_bytes = *commit_limit > *physical_total ? *commit_limit - *physical_total : 0;
  const std::uint64_t beyond_ram = *commit_total > *physical_total ? *commit_total - *physical_total : 0;
  m.swap_free_bytes = m.swap_total_bytes > beyond_ram ? m.swap_total_bytes - beyond_ram : 0;

  WindowsMemorySection& w = r.windows;
  w.commit_peak_bytes = *commit_peak;
  w.system_cache_bytes = *cache;
  w.kernel_paged_pool_bytes = *paged;
  w.kernel_nonpaged_pool_bytes = *nonpaged;
  if (status) w.memory_load_percent = status->memory_load_percent;
  w.processes = p.process_count;
  w.threads = p.thread_count;
  w.handles = p.handle_count;
  return r;
}

}  // namespace memdiag::windows
