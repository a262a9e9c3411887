// SPDX-License-Identifier: Apache-2.0
// memdiagd.exe as a Windows service: the service control dispatcher (StartServiceCtrlDispatcherW),
// the service's main, and its control handler. Stop and shutdown stop the daemon; paramchange
// (`sc control memdiagd paramchange`) reloads --config, as SIGHUP does on Linux. The service
// reports START_PENDING, RUNNING once HTTP listens, STOP_PENDING and STOPPED (with the exit
// code as a service-specific error when it is not 0).
#pragma once

#include <string>
#include <vector>

namespace memdiag::windows_service {

// Runs memdiagd with the command line `args` as the service the service manager started this
// process for, and sets the exit code once it has stopped. Returns false, having run nothing,
// when the process was not started by the service manager (run from a console:
// ERROR_FAILED_SERVICE_CONTROLLER_CONNECT). The service has no console: without --log.file it
// logs to %ProgramData%\memdiag\memdiagd.log, and whatever keeps it from starting (a bad
// config, a taken port) is logged there and reported to the service manager as the
// service-specific exit code (2, 1).
bool run_as_service(const std::vector<std::string>& args, int& exit_code);

}  // namespace memdiag::windows_service
