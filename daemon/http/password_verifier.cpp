// SPDX-License-Identifier: Apache-2.0
#include "daemon/http/password_verifier.hpp"

#include <pthread.h>  // mingw-w64 posix threads have pthread_setname_np too

#include <algorithm>
#include <system_error>
#include <utility>

namespace memdiag::http {
namespace {

void wipe(std::string& secret) {
  // Through a volatile pointer, so the stores are not dropped as dead before the free.
  volatile char* p = secret.data();
  for (std::size_t i = 0; i < secret.size(); ++i) p[i] = 0;
  secret.clear();
}

}  // namespace

PasswordVerifier::PasswordVerifier(std::size_t capacity, Matches matches, std::function<void()> on_result)
    : capacity_(std::max<std::size_t>(capacity, 1)), matches_(std::move(matches)), on_result_(std::move(on_result)) {}

PasswordVerifier::~PasswordVerifier() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    for (PasswordCheck& check : queue_) wipe(check.password);
    queue_.clear();
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool PasswordVerifier::submit(PasswordCheck check) {
  {
    std::lock_guard lock(mutex_);
    if (queue_.size() + running_ >= capacity_) {
      wipe(check.password);
      return false;
    }
    if (!thread_.joinable()) {
      // Made at the first check, so a daemon without basic auth has no such thread. Threads can
      // run out (a pids cgroup, TasksMax): then this check is refused (503), not the daemon.
      try {
        thread_ = std::thread([this] { run(); });
      } catch (const std::system_error&) {
        wipe(check.password);
        return false;
      }
    }
    queue_.push_back(std::move(check));
  }
  wake_.notify_one();
  return true;
}

std::vector<CheckedPassword> PasswordVerifier::take_results() {
  std::lock_guard lock(mutex_);
  return std::exchange(results_, {});
}

void PasswordVerifier::run() {
  pthread_setname_np(pthread_self(), "memdiag-auth");
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    PasswordCheck check = std::move(queue_.front());
    queue_.pop_front();
    ++running_;
    lock.unlock();
    const bool matches = matches_(check.password, check.key.hash);
    wipe(check.password);
    lock.lock();
    --running_;
    results_.push_back({check.ticket, matches && check.known_user, std::move(check.key)});
    lock.unlock();
    on_result_();
    lock.lock();
  }
}

}  // namespace memdiag::http
