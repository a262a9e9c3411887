// SPDX-License-Identifier: Apache-2.0
#include "probes/canary/decay_thread.hpp"

#include <utility>

namespace memdiag::alloc::detail {

bool DecayThread::start(std::chrono::milliseconds period, std::function<void()> work, void* stack,
                        std::size_t stack_bytes) noexcept {
  std::lock_guard lock(mu_);
  if (running_) return true;
  stopping_ = false;
  period_ = period;
  work_ = std::move(work);
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) return false;
  if (stack != nullptr) pthread_attr_setstack(&attr, stack, stack_bytes);
  running_ = pthread_create(&thread_, &attr, &DecayThread::run, this) == 0;
  pthread_attr_destroy(&attr);
  return running_;
}

void* DecayThread::run(void* self) noexcept {
  auto* t = static_cast<DecayThread*>(self);
  std::unique_lock lock(t->mu_);
  while (!t->wake_.wait_for(lock, t->period_, [t] { return t->stopping_; })) {
    lock.unlock();
    t->work_();
    lock.lock();
  }
  return nullptr;
}

void DecayThread::stop() noexcept {
  pthread_t finished;
  {
    std::lock_guard lock(mu_);
    if (!running_) return;
    stopping_ = true;
    running_ = false;
    finished = thread_;
  }
  wake_.notify_all();
  pthread_join(finished, nullptr);
}

bool DecayThread::running() const noexcept {
  std::lock_guard lock(mu_);
  return running_;
}

}  // namespace memdiag::alloc::detail
