// SPDX-License-Identifier: Apache-2.0
// memdiagd.exe's entry point: a service when the service manager starts it, in the foreground
// with --console (or when run from a console without it). Exit codes as on Linux: 0 ok,
// 1 runtime failure (port taken), 2 bad command line or config.
#include <spdlog/spdlog.h>

#include <string>
#include <vector>

#include "daemon/cli.hpp"
#include "daemon/daemon.hpp"
#include "daemon/logging.hpp"
#include "daemon/startup.hpp"
#include "daemon/windows/console_control.hpp"
#include "daemon/windows/service_runner.hpp"

int main(int argc, char** argv) {
  using namespace memdiag;
  setup_logging();
  const std::vector<std::string> args(argv + 1, argv + argc);
  // A service unless told otherwise: the service manager starts it without --console, and
  // --help, --version, --check-config and --once are for a person at a console.
  const auto parsed = parse_cli(args);
  if (parsed && !parsed->console && !parsed->help && !parsed->version && !parsed->check_config && !parsed->once) {
    int exit_code = 0;
    if (windows_service::run_as_service(args, exit_code)) return exit_code;
  }
  auto startup = start_from_command_line(args);
  if (!startup) return startup.error();
  if (startup->options.once) return run_once(startup->config);
  if (!startup->options.console) {
    spdlog::info("not started by the service manager: running in the foreground (--console)");
  }
  const int exit_code = serve(startup->options, std::move(startup->config), windows_console::console_control_events());
  windows_console::daemon_stopped();
  return exit_code;
}
