// SPDX-License-Identifier: Apache-2.0
// A background thread that calls `work` every `period` until stopped: how idle free memory goes
// back to the OS without any call from the allocator's users. It sleeps on a condition variable,
// so stopping it (the allocator's destructor) is immediate, not a period late.
//
// It may run on a stack the caller provides (from the allocator's own reservation), so starting
// it lazily, in the middle of a workload, maps nothing new: pthread's default stack would be two
// more mappings (stack and guard page).
#pragma once

#include <pthread.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>

namespace memdiag::alloc::detail {

class DecayThread {
 public:
  DecayThread() = default;
  ~DecayThread() { stop(); }
  DecayThread(const DecayThread&) = delete;
  DecayThread& operator=(const DecayThread&) = delete;

  // Starts the thread unless it runs already; false when it cannot be created. stack: nullptr
  // for pthread's default.
  bool start(std::chrono::milliseconds period, std::function<void()> work, void* stack,
             std::size_t stack_bytes) noexcept;
  void stop() noexcept;
  bool running() const noexcept;

 private:
  static void* run(void* self) noexcept;

  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool running_ = false;
  pthread_t thread_{};
  std::chrono::milliseconds period_{0};
  std::function<void()> work_;
};

}  // namespace memdiag::alloc::detail
