// SPDX-License-Identifier: Apache-2.0
#include "windows/process_memory/windows_process_source.hpp"

// clang-format off
#include <windows.h>
#include <psapi.h>
// clang-format on

#include <string>
#include <vector>

#include "windows/figures/process_figures.hpp"

namespace memdiag::windows {

namespace {

// PROCESS_MEMORY_COUNTERS_EX2 as Windows 10 21H2 declares it; older mingw headers lack it.
struct MemoryCountersEx2 {
  DWORD cb;
  DWORD PageFaultCount;
  SIZE_T PeakWorkingSetSize;
  SIZE_T WorkingSetSize;
  SIZE_T QuotaPeakPagedPoolUsage;
  SIZE_T QuotaPagedPoolUsage;
  SIZE_T QuotaPeakNonPagedPoolUsage;
  SIZE_T QuotaNonPagedPoolUsage;
  SIZE_T PagefileUsage;
  SIZE_T PeakPagefileUsage;
  SIZE_T PrivateUsage;
  SIZE_T PrivateWorkingSetSize;
  ULONG64 SharedCommitUsage;
};

std::string narrow(const wchar_t* wide, int length) {
  if (length <= 0) return {};
  const int size = ::WideCharToMultiByte(CP_UTF8, 0, wide, length, nullptr, 0, nullptr, nullptr);
  std::string out(static_cast<std::size_t>(size > 0 ? size : 0), '\0');
  if (size > 0) ::WideCharToMultiByte(CP_UTF8, 0, wide, length, out.data(), size, nullptr, nullptr);
  return out;
}

// The image's file name ("python.exe"), or "" when the process will not say.
std::string image_name(HANDLE process) {
  wchar_t path[MAX_PATH];
  DWORD length = MAX_PATH;
  if (!::QueryFullProcessImageNameW(process, 0, path, &length)) return {};
  DWORD start = length;
  while (start > 0 && path[start - 1] != L'\\') --start;
  return narrow(path + start, static_cast<int>(length - start));
}

// One process's counters; false when it cannot be opened (protected, exited) or read.
bool read_process(DWORD pid, ProcessCounters& out) {
  HANDLE process = ::OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, pid);
  if (process == nullptr) return false;
  // Success alone does not say the EX2 fields were filled: the call takes any size from the
  // basic struct's up and fills what it knows (older Windows, wine). The private working set is
  // taken only when it was written and is not 0 (a live process always has private pages).
  constexpr SIZE_T kUnwritten = ~SIZE_T{0};
  MemoryCountersEx2 ex2{};
  ex2.cb = sizeof ex2;
  ex2.PrivateWorkingSetSize = kUnwritten;
  bool ok = ::GetProcessMemoryInfo(process, reinterpret_cast<PROCESS_MEMORY_COUNTERS*>(&ex2), sizeof ex2) != 0;
  const bool has_ex2 = ok && ex2.PrivateWorkingSetSize != kUnwritten && ex2.PrivateWorkingSetSize != 0;
  if (!ok) {  // a system that refuses the larger size: the EX struct
    PROCESS_MEMORY_COUNTERS_EX ex{};
    ex.cb = sizeof ex;
    ok = ::GetProcessMemoryInfo(process, reinterpret_cast<PROCESS_MEMORY_COUNTERS*>(&ex), sizeof ex) != 0;
    if (ok) {
      ex2.PageFaultCount = ex.PageFaultCount;
      ex2.PeakWorkingSetSize = ex.PeakWorkingSetSize;
      ex2.WorkingSetSize = ex.WorkingSetSize;
      ex2.PrivateUsage = ex.PrivateUsage;
    }
  }
  if (ok) {
    out.pid = pid;
    out.image_name = image_name(process);
    out.working_set_bytes = ex2.WorkingSetSize;
    out.peak_working_set_bytes = ex2.PeakWorkingSetSize;
    out.private_bytes = ex2.PrivateUsage;
    if (has_ex2) out.private_working_set_bytes = ex2.PrivateWorkingSetSize;
    out.page_faults = ex2.PageFaultCount;
  }
  ::CloseHandle(process);
  return ok;
}

class WindowsProcessSource final : public Source {
 public:
  explicit WindowsProcessSource(const WindowsProcessOptions& options)
      : selection_{static_cast<std::size_t>(options.top_n), ::GetCurrentProcessId()} {}

  std::string_view name() const override { return "windows_processes"; }

  Status probe() override { return Ok{}; }

  Status sample(Snapshot& out) override {
    // EnumProcesses cannot say how many there are: grow the buffer until it is not filled.
    pids_.resize(std::max<std::size_t>(pids_.size(), 1024));
    DWORD bytes = 0;
    for (;;) {
      const DWORD capacity = static_cast<DWORD>(pids_.size() * sizeof(DWORD));
      if (!::EnumProcesses(pids_.data(), capacity, &bytes)) {
        return make_error("EnumProcesses failed: error " + std::to_string(::GetLastError()));
      }
      if (bytes < capacity || pids_.size() >= (1u << 20)) break;
      pids_.resize(pids_.size() * 2);
    }
    const std::size_t listed = bytes / sizeof(DWORD);
    counters_.clear();
    for (std::size_t i = 0; i < listed; ++i) {
      ProcessCounters c;
      if (pids_[i] != 0 && read_process(pids_[i], c)) counters_.push_back(std::move(c));
    }
    out.process_memory = process_memory(counters_, listed, selection_);
    return Ok{};
  }

 private:
  ProcessSelection selection_;
  std::vector<DWORD> pids_;
  std::vector<ProcessCounters> counters_;
};

}  // namespace

SourceRegistration windows_processes_registration() {
  return register_source(SourceSpec<WindowsProcessOptions>{
      .name = "windows_processes",
      .platform = Platform::kWindows,
      .keys = {{"top_n",
                [](const OptionValue& value, WindowsProcessOptions& options) {
                  return read_integer_between(value, 0, 1000, options.top_n);
                }}},
      .make = [](const SourceContext&, const WindowsProcessOptions& options) -> std::unique_ptr<Source> {
        return std::make_unique<WindowsProcessSource>(options);
      },
  });
}

}  // namespace memdiag::windows
