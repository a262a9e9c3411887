// SPDX-License-Identifier: Apache-2.0
#include "daemon/cli.hpp"

#include "daemon/config_values.hpp"

namespace memdiag {

std::string usage_text() {
  return "usage: memdiagd [--config FILE] [--web.listen-address HOST:PORT] [--web.config.file FILE]\n"
         "                [--web.unix-socket PATH] [--path.procfs DIR] [--path.sysfs DIR] [--log.level LEVEL]\n"
         "                [--log.file FILE]\n"
         "       memdiagd.exe [--console] [options as above] (Windows: a service unless --console)\n"
         "       memdiagd --check-config --config FILE\n"
         "       memdiagd --once [--config FILE] [--path.procfs DIR]\n"
         "       memdiagd diagnose [--format text|json] [--duration S] [--since D] (diagnose --help)\n"
         "       memdiagd record --output FILE [--duration S] (record --help; replay: diagnose --replay FILE)\n"
         "       memdiagd --version | --help\n"
         "\n"
         "  --config FILE                 YAML config (see deploy/memdiagd.yaml); defaults if absent\n"
         "  --web.listen-address H:P      where /metrics and /healthz are served (default 0.0.0.0:9842)\n"
         "  --web.config.file FILE        TLS, basic auth and headers (the Prometheus exporter-toolkit's\n"
         "                                web config format); re-read when it changes\n"
         "  --web.unix-socket PATH        also serve on this Unix socket, to root only (mode 0600), without\n"
         "                                TLS or basic auth (\"\": none; Linux)\n"
         "  --path.procfs DIR             procfs root (default /proc)\n"
         "  --path.sysfs DIR              sysfs root (default /sys)\n"
         "  --log.level LEVEL             trace|debug|info|warn|error|critical|off\n"
         "  --log.file FILE               also log to FILE (appended; the Windows service's default:\n"
         "                                %ProgramData%\\memdiag\\memdiagd.log)\n"
         "  --console                     Windows: run in the foreground (Ctrl+C stops), not as a service\n"
         "  --check-config                validate the config (and the web config it names) and exit: 0\n"
         "                                valid, 2 invalid\n"
         "  --once                        sample once, print the Prometheus exposition, exit\n";
}

Expected<CliOptions> parse_cli(const std::vector<std::string>& args) {
  CliOptions options;
  struct ValueFlag {
    std::string_view name;
    std::optional<std::string> CliOptions::*field;
  };
  static const ValueFlag kValueFlags[] = {
      {"--config", &CliOptions::config_path},        {"--web.listen-address", &CliOptions::listen_address},
      {"--web.config.file", &CliOptions::web_config_file}, {"--web.unix-socket", &CliOptions::unix_socket},
      {"--path.procfs", &CliOptions::procfs},        {"--path.sysfs", &CliOptions::sysfs},
      {"--log.level", &CliOptions::log_level},      {"--log.file", &CliOptions::log_file},
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    std::optional<std::string> inline_value;
    if (const auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      inline_value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    }
    if (arg == "--check-config" || arg == "--once" || arg == "--version" || arg == "--help" || arg == "-h" ||
        arg == "--console") {
      if (inline_value) return make_error(arg + " takes no value");
      if (arg == "--check-config") options.check_config = true;
      if (arg == "--console") options.console = true;
      if (arg == "--once") options.once = true;
      if (arg == "--version") options.version = true;
      if (arg == "--help" || arg == "-h") options.help = true;
      continue;
    }
    bool matched = false;
    for (const auto& flag : kValueFlags) {
      if (arg != flag.name) continue;
      matched = true;
      if (inline_value) {
        options.*flag.field = *inline_value;
      } else if (i + 1 < args.size()) {
        options.*flag.field = args[++i];
      } else {
        return make_error(arg + " needs a value");
      }
    }
    if (!matched) {
      std::vector<std::string_view> known = {"--check-config", "--once", "--version", "--help", "--console"};
      for (const auto& flag : kValueFlags) known.push_back(flag.name);
      std::string message = "unknown argument '" + args[i] + "'";
      if (auto hint = closest_match(arg, known)) message += "; did you mean '" + *hint + "'?";
      return make_error(message);
    }
  }
  if (options.check_config && !options.config_path && !options.web_config_file) {
    return make_error("--check-config needs --config FILE (or --web.config.file FILE)");
  }
  return options;
}

ConfigResult apply_cli_overrides(Config config, const CliOptions& options) {
  auto refuse = [](const std::string& flag, const Error& e) { return ConfigError{"command line", 0, flag, e.message}; };
  if (options.listen_address) {
    if (auto st = check_listen_address(*options.listen_address); !st) return refuse("--web.listen-address", st.error());
    config.listen_address = *options.listen_address;
  }
  if (options.web_config_file) config.web_config_file = *options.web_config_file;  // loaded and checked apart
  if (options.unix_socket) {
    if (auto st = check_unix_socket_path(*options.unix_socket); !st) return refuse("--web.unix-socket", st.error());
    config.unix_socket = *options.unix_socket;
  }
  if (options.procfs) {
    if (auto st = check_directory_path(*options.procfs); !st) return refuse("--path.procfs", st.error());
    config.paths.procfs = *options.procfs;
  }
  if (options.sysfs) {
    if (auto st = check_directory_path(*options.sysfs); !st) return refuse("--path.sysfs", st.error());
    config.paths.sysfs = *options.sysfs;
  }
  if (options.log_level) {
    if (auto st = check_log_level(*options.log_level); !st) return refuse("--log.level", st.error());
    config.log_level = *options.log_level;
  }
  return config;
}

ConfigResult resolve_config(const CliOptions& options) {
  if (!options.config_path) return apply_cli_overrides(default_config(), options);
  auto loaded = load_config_file(*options.config_path);
  if (!loaded) return loaded;
  return apply_cli_overrides(std::move(loaded).value(), options);
}

}  // namespace memdiag
