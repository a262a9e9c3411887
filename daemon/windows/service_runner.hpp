// memdiagd.exe as a Windows service: the service control dispatcher (StartServiceCtrlDispatcherW),
// the service's main, and its control handler. Stop and shutdown stop the daemon; paramchange
// (`sc control memdiagd paramchange`) reloads --config, as SIGHUP does on Linux. The service
// reports START_PENDING, RUNNING once HTTP listens, STOP_PENDING and STOPPED (with the exit
// code as a service-specific error when it is not 0).
#pragma once

#include "daemon/startup.hpp"

namespace memdiag::windows_service {

// Runs `startup` as the service the service manager started this process for, and sets the
// exit code once it has stopped. Returns false, having run and taken nothing, when the
// process was not started by the service manager (run from a console:
// ERROR_FAILED_SERVICE_CONTROLLER_CONNECT). Without --log.file, the service logs to
// %ProgramData%\memdiag\memdiagd.log: it has no console.
bool run_as_service(Startup& startup, int& exit_code);

}  // namespace memdiag::windows_service
