// SPDX-License-Identifier: Apache-2.0
// From what GetPerformanceInfo and GlobalMemoryStatusEx report to the snapshot's sections:
// the OS-neutral SystemMemory the models read, and the Windows detail. Pure: the
// Win32 source (windows/performance_info) only copies the structs' fields into these plain
// ones, so every derivation here is tested natively on Linux.
#pragma once

#include <cstdint>
#include <optional>

#include "probes/core/expected.hpp"
#include "probes/core/system_memory_section.hpp"
#include "probes/core/windows_memory_section.hpp"

namespace memdiag::windows {

// PERFORMANCE_INFORMATION's fields, in its units: pages of page_size_bytes.
struct PerformanceCounts {
  std::uint64_t commit_total_pages = 0;
  std::uint64_t commit_limit_pages = 0;
  std::uint64_t commit_peak_pages = 0;
  std::uint64_t physical_total_pages = 0;
  std::uint64_t physical_available_pages = 0;
  std::uint64_t system_cache_pages = 0;
  std::uint64_t kernel_paged_pages = 0;
  std::uint64_t kernel_nonpaged_pages = 0;
  std::uint64_t page_size_bytes = 0;
  std::uint32_t handle_count = 0;
  std::uint32_t process_count = 0;
  std::uint32_t thread_count = 0;
};

// The MEMORYSTATUSEX fields used, in bytes (its page-file fields repeat GetPerformanceInfo's
// commit limit and headroom, so they are not taken).
struct MemoryStatusCounts {
  std::uint32_t memory_load_percent = 0;
  std::uint64_t total_physical_bytes = 0;
  std::uint64_t available_physical_bytes = 0;
};

struct MemoryReading {
  SystemMemory system;
  WindowsMemorySection windows;
};

// Refuses what cannot be a real reading (no page size, no physical memory, more available than
// there is, a commit limit below the charge's floor of 0 pages of page file...). The memory
// status is optional (its call can fail alone); it gives the memory load, and the physical
// figures where GetPerformanceInfo's are 0.
//
// In SystemMemory, Windows's terms map as:
// - commit charge and limit: CommitTotal and CommitLimit; Windows enforces the limit always
//   (the overcommit policy is "never");
// - swap: the page files. Their size is the commit limit less physical memory (the limit is
//   RAM plus page files, less what the system keeps); what of them is free is not known without
//   PDH's Paging File counters, so free is bounded by what can still be committed: the size
//   less the charge beyond physical memory, at least 0 and at most the size. Models that read
//   swap on Windows read that bound;
// - commit_backed: absent. Windows charges commit when it is promised and refuses beyond the
//   limit, so no promise can come due without backing.
Expected<MemoryReading> memory_reading(const PerformanceCounts& performance,
                                       const std::optional<MemoryStatusCounts>& status);

}  // namespace memdiag::windows
