// memdiagd entry point: parse the command line, resolve the config, pick the mode.
// Exit codes: 0 ok, 1 runtime failure (port taken; forced stop with the sampler stuck in a
// kernel read), 2 bad command line or config.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <string>
#include <vector>

#include "daemon/build_info.hpp"
#include "daemon/cli.hpp"
#include "daemon/daemon.hpp"
#include "daemon/diagnose_command.hpp"
#include "daemon/logging.hpp"
#include "daemon/record_command.hpp"
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
  auto options = parse_cli(args);
  if (!options) {
    std::fprintf(stderr, "memdiagd: %s\n%s", options.error().message.c_str(), usage_text().c_str());
    return 2;
  }
  if (options->help) {
    std::fputs(usage_text().c_str(), stdout);
    return 0;
  }
  if (options->version) {
    std::printf("memdiagd %s (%s, %s)\n", build::kVersion, build::kRevision, build::kCompiler);
    return 0;
  }
  auto config = resolve_config(*options);
  if (!config) {
    std::fprintf(stderr, "memdiagd: invalid config: %s\n", config.error().to_string().c_str());
    return 2;
  }
  if (options->check_config) {
    std::printf("%s: ok\n", config->file.c_str());
    return 0;
  }
  set_log_level(config->log_level);
  if (options->once) return run_once(*config);
  return run_daemon(*options, std::move(config).value());
}
