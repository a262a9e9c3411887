// A background thread that calls `work` every `period` until stopped: how idle free memory goes
// back to the OS without any call from the allocator's users. It sleeps on a condition variable,
// so stopping it (the allocator's destructor) is immediate, not a period late.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace memdiag::alloc::detail {

class DecayThread {
 public:
  DecayThread() = default;
  ~DecayThread() { stop(); }
  DecayThread(const DecayThread&) = delete;
  DecayThread& operator=(const DecayThread&) = delete;

  // Starts the thread unless it runs already; false when it cannot be created.
  bool start(std::chrono::milliseconds period, std::function<void()> work) noexcept;
  void stop() noexcept;
  bool running() const noexcept;

 private:
  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace memdiag::alloc::detail
