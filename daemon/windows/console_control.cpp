// SPDX-License-Identifier: Apache-2.0
#include "daemon/windows/console_control.hpp"

#include <windows.h>

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace memdiag::windows_console {
namespace {

ControlEventQueue& queue() {
  static ControlEventQueue events;
  return events;
}

struct Stopped {
  std::mutex mutex;
  std::condition_variable said;
  bool stopped = false;
};

Stopped& stopped() {
  static Stopped s;
  return s;
}

// Waits until daemon_stopped() or 4.5 s: Windows ends the process when the handler of a close,
// logoff or shutdown event returns, and at the latest 5 s after the event.
void wait_for_the_daemon() {
  Stopped& s = stopped();
  std::unique_lock lock(s.mutex);
  s.said.wait_for(lock, std::chrono::milliseconds(4500), [&s] { return s.stopped; });
}

// Runs on a thread Windows starts for the event.
BOOL WINAPI on_console_event(DWORD event) {
  switch (event) {
    case CTRL_C_EVENT:
      queue().post({ControlEvent::Kind::kStop, "Ctrl+C"});
      return TRUE;
    case CTRL_BREAK_EVENT:
      queue().post({ControlEvent::Kind::kStop, "Ctrl+Break"});
      return TRUE;
    case CTRL_CLOSE_EVENT:
    case CTRL_LOGOFF_EVENT:
    case CTRL_SHUTDOWN_EVENT:
      queue().post({ControlEvent::Kind::kStop, "console closing"});
      wait_for_the_daemon();
      return TRUE;
    default:
      return FALSE;
  }
}

}  // namespace

void daemon_stopped() {
  Stopped& s = stopped();
  {
    std::lock_guard lock(s.mutex);
    s.stopped = true;
  }
  s.said.notify_all();
}

NextControlEvent console_control_events() {
  static const bool installed = ::SetConsoleCtrlHandler(on_console_event, TRUE) != 0;
  (void)installed;
  return [] { return queue().wait(); };
}

}  // namespace memdiag::windows_console
