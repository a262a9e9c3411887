// SPDX-License-Identifier: Apache-2.0
// memdiagd.exe --console: the console's Ctrl+C, Ctrl+Break, closing its window, logoff and
// shutdown stop the daemon (SetConsoleCtrlHandler), as SIGINT and SIGTERM do on Linux. There
// is no console reload: a service reloads with `sc control memdiagd paramchange`.
#pragma once

#include "daemon/control_events.hpp"

namespace memdiag::windows_console {

// Installs the console control handler (once) and returns the wait for its next event.
NextControlEvent console_control_events();

// Says the daemon has stopped. Closing the console window, logoff and shutdown end the process
// as soon as their handler returns: the handler waits for this (at most 4.5 s, within the 5 s
// Windows allows) so the daemon stops cleanly first.
void daemon_stopped();

}  // namespace memdiag::windows_console
