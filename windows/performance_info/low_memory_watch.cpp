// SPDX-License-Identifier: Apache-2.0
#include "windows/performance_info/low_memory_watch.hpp"

#include <windows.h>

namespace memdiag::windows {

LowMemoryWatch::LowMemoryWatch() {
  low_ = ::CreateMemoryResourceNotification(LowMemoryResourceNotification);
  if (low_ == nullptr) {
    error_ = "CreateMemoryResourceNotification failed: error " + std::to_string(::GetLastError());
    return;
  }
  stop_ = ::CreateEventW(nullptr, TRUE, FALSE, nullptr);
  if (stop_ == nullptr) {
    error_ = "CreateEvent failed: error " + std::to_string(::GetLastError());
    ::CloseHandle(low_);
    low_ = nullptr;
    return;
  }
  thread_ = std::thread([this] { run(); });
}

LowMemoryWatch::~LowMemoryWatch() {
  if (stop_ != nullptr) ::SetEvent(stop_);
  if (thread_.joinable()) thread_.join();
  if (stop_ != nullptr) ::CloseHandle(stop_);
  if (low_ != nullptr) ::CloseHandle(low_);
}

std::optional<bool> LowMemoryWatch::low_now() const {
  if (low_ == nullptr) return std::nullopt;
  BOOL state = FALSE;
  if (!::QueryMemoryResourceNotification(low_, &state)) return std::nullopt;
  return state != FALSE;
}

void LowMemoryWatch::run() {
  const HANDLE handles[2] = {stop_, low_};
  for (;;) {
    const DWORD woke = ::WaitForMultipleObjects(2, handles, FALSE, INFINITE);
    if (woke != WAIT_OBJECT_0 + 1) return;  // stopped, or the wait failed: nothing more to count
    signals_.fetch_add(1, std::memory_order_relaxed);
    // The notification stays signaled while memory is low: wait for it to clear, then re-arm.
    for (;;) {
      if (::WaitForSingleObject(stop_, 1000) == WAIT_OBJECT_0) return;
      const std::optional<bool> low = low_now();
      if (!low || !*low) break;
    }
  }
}

}  // namespace memdiag::windows
