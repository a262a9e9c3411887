// SPDX-License-Identifier: Apache-2.0
// What tells a running daemon to stop or to reload its config. On Linux these are signals
// (SIGTERM, SIGINT, SIGHUP; signal_control.cpp); on Windows, the console's Ctrl+C and the
// service manager's stop, shutdown and paramchange (daemon/windows/). serve() (daemon.hpp)
// only asks for the next one, so the serving, reloading and stopping are written once.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>

namespace memdiag {

struct ControlEvent {
  enum class Kind { kStop, kReload };
  Kind kind = Kind::kStop;
  std::string what;  // for the log: "SIGTERM", "service stop", "Ctrl+C"
};

// Blocks until the next event.
using NextControlEvent = std::function<ControlEvent()>;

// Events posted by handlers on other threads (a console control handler, a service control
// handler) and taken in order by the daemon's main thread.
class ControlEventQueue {
 public:
  void post(ControlEvent event) {
    {
      std::lock_guard lock(mutex_);
      events_.push_back(std::move(event));
    }
    posted_.notify_one();
  }
  ControlEvent wait() {
    std::unique_lock lock(mutex_);
    posted_.wait(lock, [this] { return !events_.empty(); });
    ControlEvent next = std::move(events_.front());
    events_.pop_front();
    return next;
  }

 private:
  std::mutex mutex_;
  std::condition_variable posted_;
  std::deque<ControlEvent> events_;
};

}  // namespace memdiag
