// SPDX-License-Identifier: Apache-2.0
// memdiag-service-control.exe NAME paramchange: sends a service the control wine's sc.exe has
// no command for (Windows's sc has `sc control NAME paramchange`), so test_windows_daemon.py can
// check that a service reloads its config. Exit 0 when the service took it, else 1 with the
// Win32 error.
#include <windows.h>

#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  if (argc != 3 || std::strcmp(argv[2], "paramchange") != 0) {
    std::fprintf(stderr, "usage: memdiag-service-control NAME paramchange\n");
    return 2;
  }
  SC_HANDLE manager = ::OpenSCManagerA(nullptr, nullptr, SC_MANAGER_CONNECT);
  if (manager == nullptr) {
    std::fprintf(stderr, "OpenSCManager: error %lu\n", ::GetLastError());
    return 1;
  }
  SC_HANDLE service = ::OpenServiceA(manager, argv[1], SERVICE_PAUSE_CONTINUE);
  SERVICE_STATUS status{};
  const bool sent = service != nullptr && ::ControlService(service, SERVICE_CONTROL_PARAMCHANGE, &status);
  const DWORD error = ::GetLastError();
  if (service != nullptr) ::CloseServiceHandle(service);
  ::CloseServiceHandle(manager);
  if (!sent) {
    std::fprintf(stderr, "paramchange to %s: error %lu\n", argv[1], error);
    return 1;
  }
  return 0;
}
