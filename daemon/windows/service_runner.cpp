// SPDX-License-Identifier: Apache-2.0
#include "daemon/windows/service_runner.hpp"

#include <windows.h>
#include <knownfolders.h>
#include <shlobj.h>
#include <spdlog/spdlog.h>

#include <string>

#include "daemon/control_events.hpp"
#include "daemon/daemon.hpp"
#include "daemon/logging.hpp"
#include "daemon/startup.hpp"

namespace memdiag::windows_service {
namespace {

// The service manager calls service_main and the control handler with no context of ours:
// what they need lives here, set before the dispatcher starts and read only after.
struct ServiceState {
  const std::vector<std::string>* args = nullptr;
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

// %ProgramData%\memdiag\memdiagd.log (C:\ProgramData), where services keep their data, from the
// known-folder API: a service's environment need not have ProgramData (wine's has another).
std::string default_log_file() {
  std::string folder = "C:\\ProgramData";
  PWSTR path = nullptr;
  if (::SHGetKnownFolderPath(FOLDERID_ProgramData, 0, nullptr, &path) == S_OK) {
    const int bytes = ::WideCharToMultiByte(CP_UTF8, 0, path, -1, nullptr, 0, nullptr, nullptr);
    if (bytes > 1) {
      folder.assign(static_cast<std::size_t>(bytes - 1), '\0');
      ::WideCharToMultiByte(CP_UTF8, 0, path, -1, folder.data(), bytes, nullptr, nullptr);
    }
  }
  ::CoTaskMemFree(path);
  return folder + "\\memdiag\\memdiagd.log";
}

// Logs a text meant for a console (newlines and all) as one critical line.
void log_complaint(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  spdlog::critical("{}", line);
}

void WINAPI service_main(DWORD, LPWSTR*) {
  g_service->handle = ::RegisterServiceCtrlHandlerExW(g_service_name, on_control, nullptr);
  if (g_service->handle == nullptr) {
    spdlog::critical("cannot register the service control handler (error {})", ::GetLastError());
    g_service->exit_code = 1;
    return;
  }
  report(SERVICE_START_PENDING, 10000);
  // The log file first, so that a refused config is said somewhere someone can read it.
  const auto options = parse_cli(*g_service->args);
  if (options && !options->log_file) {
    if (auto logging = add_log_file(default_log_file()); !logging) spdlog::error("{}", logging.error().message);
  }
  auto startup = start_from_command_line(*g_service->args, log_complaint);
  if (!startup) {
    g_service->exit_code = startup.error();
    spdlog::default_logger()->flush();
    report(SERVICE_STOPPED);
    return;
  }
  ServeHooks hooks;
  hooks.on_serving = [] { report(SERVICE_RUNNING); };
  hooks.on_fatal = [](const std::string& why) { spdlog::critical("{}", why); };
  hooks.on_forced_exit = [] {
    g_service->exit_code = 1;
    report(SERVICE_STOPPED);
  };
  g_service->exit_code = serve(startup->options, std::move(startup->config), [] { return g_service->events.wait(); }, hooks);
  spdlog::default_logger()->flush();
  report(SERVICE_STOPPED);  // the process may end at any moment after this
}

}  // namespace

bool run_as_service(const std::vector<std::string>& args, int& exit_code) {
  static ServiceState state;
  state.args = &args;
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
