// SPDX-License-Identifier: Apache-2.0
// memdiagd entry point: parse the command line, resolve the config, pick the mode.
// Exit codes: 0 ok, 1 runtime failure (port taken; forced stop with the sampler stuck in a
// kernel read), 2 bad command line or config.
#include <spdlog/spdlog.h>

#include <string>
#include <vector>

#include "daemon/daemon.hpp"
#include "daemon/diagnose_command.hpp"
#include "daemon/logging.hpp"
#include "daemon/record_command.hpp"
#include "daemon/startup.hpp"
#include "probes/bpf/bpf_factories.hpp"
#include "probes/canary/canary_child_main.hpp"

int main(int argc, char** argv) {
  using namespace memdiag;
  setup_logging();

  const std::vector<std::string> args(argv + 1, argv + argc);
  // Not a user-facing mode: the daemon runs itself this way for each canary, its own (in its own
  // cgroup) and those in chosen cgroups (probes/canary/canary_child.hpp), readings to stdout.
  if (!args.empty() && args[0] == "--canary-child") {
    return canary::run_canary_child(std::vector<std::string>(args.begin() + 1, args.end()));
  }
  // Nor this: the eBPF objects are loaded by the daemon run this way, a fresh process that
  // hands their descriptors back (probes/bpf/bpf_loader_child.hpp).
  if (!args.empty() && args[0] == "--bpf-loader") {
    return run_bpf_loader(std::vector<std::string>(args.begin() + 1, args.end()));
  }
  // This binary is the one with those modes: the canary source and the eBPF probes start their
  // children from it.
  canary::set_canary_child_program("/proc/self/exe");
  set_bpf_loader_program("/proc/self/exe");
  if (!args.empty() && args[0] == "diagnose") return run_diagnose(std::vector<std::string>(args.begin() + 1, args.end()));
  if (!args.empty() && args[0] == "record") return run_record(std::vector<std::string>(args.begin() + 1, args.end()));
  auto startup = start_from_command_line(args);
  if (!startup) return startup.error();
  if (startup->options.once) return run_once(startup->config);
  return run_daemon(startup->options, std::move(startup->config));
}
