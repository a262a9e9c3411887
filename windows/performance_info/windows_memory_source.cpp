// SPDX-License-Identifier: Apache-2.0
#include "windows/performance_info/windows_memory_source.hpp"

// clang-format off
#include <windows.h>
#include <psapi.h>
// clang-format on

#include <string>

#include "windows/figures/memory_figures.hpp"
#include "windows/performance_info/low_memory_watch.hpp"

namespace memdiag::windows {

namespace {

Status read(PERFORMANCE_INFORMATION& info) {
  if (!::GetPerformanceInfo(&info, sizeof info)) {
    return make_error("GetPerformanceInfo failed: error " + std::to_string(::GetLastError()));
  }
  return Ok{};
}

class WindowsMemorySource final : public Source {
 public:
  std::string_view name() const override { return "windows_memory"; }

  Status probe() override {
    PERFORMANCE_INFORMATION info{};
    return read(info);
  }

  Status sample(Snapshot& out) override {
    PERFORMANCE_INFORMATION info{};
    if (Status status = read(info); !status) return status;
    PerformanceCounts counts;
    counts.commit_total_pages = info.CommitTotal;
    counts.commit_limit_pages = info.CommitLimit;
    counts.commit_peak_pages = info.CommitPeak;
    counts.physical_total_pages = info.PhysicalTotal;
    counts.physical_available_pages = info.PhysicalAvailable;
    counts.system_cache_pages = info.SystemCache;
    counts.kernel_paged_pages = info.KernelPaged;
    counts.kernel_nonpaged_pages = info.KernelNonpaged;
    counts.page_size_bytes = info.PageSize;
    counts.handle_count = info.HandleCount;
    counts.process_count = info.ProcessCount;
    counts.thread_count = info.ThreadCount;

    // Optional: the memory load, and physical memory where the first call has none.
    std::optional<MemoryStatusCounts> status;
    MEMORYSTATUSEX ex{};
    ex.dwLength = sizeof ex;
    if (::GlobalMemoryStatusEx(&ex)) {
      status = MemoryStatusCounts{ex.dwMemoryLoad, ex.ullTotalPhys, ex.ullAvailPhys};
    }
    auto reading = memory_reading(counts, status);
    if (!reading) return reading.error();
    out.system_memory = reading->system;
    out.windows_memory = reading->windows;
    out.windows_memory->low_memory = low_memory_.low_now();
    out.windows_memory->low_memory_signals_total = low_memory_.signals();
    out.overcommit_policy = OvercommitPolicy{OvercommitMode::kNever, std::nullopt, std::nullopt};
    return Ok{};
  }

  std::string degraded() const override {
    return low_memory_.error().empty() ? std::string() : "no low-memory notification: " + low_memory_.error();
  }

 private:
  LowMemoryWatch low_memory_;
};

}  // namespace

SourceRegistration windows_memory_registration() {
  return register_source(SourceSpec<NoOptions>{
      .name = "windows_memory",
      .platform = Platform::kWindows,
      .make = [](const SourceContext&, const NoOptions&) -> std::unique_ptr<Source> {
        return std::make_unique<WindowsMemorySource>();
      },
  });
}

}  // namespace memdiag::windows
