#include "daemon/windows/console_control.hpp"

#include <windows.h>

namespace memdiag::windows_console {
namespace {

ControlEventQueue& queue() {
  static ControlEventQueue events;
  return events;
}

// Runs on a thread Windows starts for the event; the process ends when a close, logoff or
// shutdown handler returns (or after ~5 s), so the daemon gets what time there is to stop.
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
      return TRUE;
    default:
      return FALSE;
  }
}

}  // namespace

NextControlEvent console_control_events() {
  static const bool installed = ::SetConsoleCtrlHandler(on_console_event, TRUE) != 0;
  (void)installed;
  return [] { return queue().wait(); };
}

}  // namespace memdiag::windows_console
