#include "daemon/windows/service_runner.hpp"

#include <windows.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <string>

#include "daemon/control_events.hpp"
#include "daemon/daemon.hpp"
#include "daemon/logging.hpp"

namespace memdiag::windows_service {
namespace {

// The service manager calls service_main and the control handler with no context of ours:
// what they need lives here, set before the dispatcher starts and read only after.
struct ServiceState {
  Startup* startup = nullptr;
  SERVICE_STATUS_HANDLE handle = nullptr;
  ControlEventQueue events;
  int exit_code = 0;
  DWORD checkpoint = 0;
};
ServiceState* g_service = nullptr;

wchar_t g_service_name[] = L"memdiagd";  // ignored for a SERVICE_WIN32_OWN_PROCESS service

void report(DWORD state, DWORD wait_hint_ms = 0) {
  SERVICE_STATUS status{};
  status.dwServiceType = SERVICE_WIN32_OWN_PROCESS;
  status.dwCurrentState = state;
  status.dwControlsAccepted =
      state == SERVICE_RUNNING ? SERVICE_ACCEPT_STOP | SERVICE_ACCEPT_SHUTDOWN | SERVICE_ACCEPT_PARAMCHANGE : 0;
  status.dwWin32ExitCode = NO_ERROR;
  if (state == SERVICE_STOPPED && g_service->exit_code != 0) {
    status.dwWin32ExitCode = ERROR_SERVICE_SPECIFIC_ERROR;
    status.dwServiceSpecificExitCode = static_cast<DWORD>(g_service->exit_code);
  }
  const bool pending = state == SERVICE_START_PENDING || state == SERVICE_STOP_PENDING;
  status.dwCheckPoint = pending ? ++g_service->checkpoint : 0;
  status.dwWaitHint = wait_hint_ms;
  ::SetServiceStatus(g_service->handle, &status);
}

DWORD WINAPI on_control(DWORD control, DWORD, LPVOID, LPVOID) {
  switch (control) {
    case SERVICE_CONTROL_STOP:
    case SERVICE_CONTROL_SHUTDOWN:
      // The sampler may take up to its stop timeout (daemon.cpp) to finish a sample.
      report(SERVICE_STOP_PENDING, 5000);
      g_service->events.post({ControlEvent::Kind::kStop,
                              control == SERVICE_CONTROL_STOP ? "service stop" : "system shutdown"});
      return NO_ERROR;
    case SERVICE_CONTROL_PARAMCHANGE:
      g_service->events.post({ControlEvent::Kind::kReload, "service paramchange"});
      return NO_ERROR;
    case SERVICE_CONTROL_INTERROGATE:
      return NO_ERROR;
    default:
      return ERROR_CALL_NOT_IMPLEMENTED;
  }
}

// %ProgramData%\memdiag\memdiagd.log, where services keep their data (C:\ProgramData).
std::string default_log_file() {
  const char* data = std::getenv("ProgramData");
  return std::string(data != nullptr && *data != '\0' ? data : "C:\\ProgramData") + "\\memdiag\\memdiagd.log";
}

void WINAPI service_main(DWORD, LPWSTR*) {
  g_service->handle = ::RegisterServiceCtrlHandlerExW(g_service_name, on_control, nullptr);
  if (g_service->handle == nullptr) {
    spdlog::critical("cannot register the service control handler (error {})", ::GetLastError());
    g_service->exit_code = 1;
    return;
  }
  report(SERVICE_START_PENDING, 10000);
  Startup& startup = *g_service->startup;
  if (!startup.options.log_file) {
    if (auto logging = add_log_file(default_log_file()); !logging) spdlog::error("{}", logging.error().message);
  }
  g_service->exit_code = serve(startup.options, std::move(startup.config), [] { return g_service->events.wait(); },
                               [] { report(SERVICE_RUNNING); });
  spdlog::default_logger()->flush();
  report(SERVICE_STOPPED);  // the process may end at any moment after this
}

}  // namespace

bool run_as_service(Startup& startup, int& exit_code) {
  static ServiceState state;
  state.startup = &startup;
  g_service = &state;
  SERVICE_TABLE_ENTRYW table[] = {{g_service_name, service_main}, {nullptr, nullptr}};
  if (!::StartServiceCtrlDispatcherW(table)) {
    if (::GetLastError() == ERROR_FAILED_SERVICE_CONTROLLER_CONNECT) return false;
    spdlog::critical("cannot start the service dispatcher (error {})", ::GetLastError());
    exit_code = 1;
    return true;
  }
  exit_code = state.exit_code;
  return true;
}

}  // namespace memdiag::windows_service
