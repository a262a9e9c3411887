#include "probes/canary/decay_thread.hpp"

#include <utility>

namespace memdiag::alloc::detail {

bool DecayThread::start(std::chrono::milliseconds period, std::function<void()> work) noexcept {
  std::lock_guard lock(mu_);
  if (thread_.joinable()) return true;
  stopping_ = false;
  try {
    thread_ = std::thread([this, period, work = std::move(work)] {
      std::unique_lock lock(mu_);
      while (!wake_.wait_for(lock, period, [this] { return stopping_; })) {
        lock.unlock();
        work();
        lock.lock();
      }
    });
  } catch (...) {
    return false;
  }
  return true;
}

void DecayThread::stop() noexcept {
  std::thread finished;
  {
    std::lock_guard lock(mu_);
    if (!thread_.joinable()) return;
    stopping_ = true;
    finished = std::move(thread_);
  }
  wake_.notify_all();
  finished.join();
}

bool DecayThread::running() const noexcept {
  std::lock_guard lock(mu_);
  return thread_.joinable();
}

}  // namespace memdiag::alloc::detail
