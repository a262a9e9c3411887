// SPDX-License-Identifier: Apache-2.0
// The low-memory resource notification (CreateMemoryResourceNotification), counted as it fires:
// a thread waits on it, counts each time it turns signaled, then waits (polling once a second)
// until it clears before waiting again, so an episode between two samples still counts once.
// The object is signaled while available memory is below the system's low threshold (32 MB per
// 4 GB of RAM, at most 64 MB, by default).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>

namespace memdiag::windows {

class LowMemoryWatch {
 public:
  // Starts the thread; `error()` says why not when the notification cannot be created.
  LowMemoryWatch();
  ~LowMemoryWatch();
  LowMemoryWatch(const LowMemoryWatch&) = delete;
  LowMemoryWatch& operator=(const LowMemoryWatch&) = delete;

  // Signaled now (absent without the notification), and the times it turned signaled.
  std::optional<bool> low_now() const;
  std::uint64_t signals() const { return signals_.load(std::memory_order_relaxed); }
  const std::string& error() const { return error_; }

 private:
  void run();
  void* low_ = nullptr;   // HANDLE of the notification
  void* stop_ = nullptr;  // HANDLE of an event that ends the thread
  std::atomic<std::uint64_t> signals_{0};
  std::string error_;
  std::thread thread_;
};

}  // namespace memdiag::windows
