// SPDX-License-Identifier: Apache-2.0
#include "daemon/startup.hpp"

#include <cstdio>

#include "daemon/build_info.hpp"
#include "daemon/logging.hpp"
#include "daemon/web_security.hpp"

namespace memdiag {

Expected<Startup, int> start_from_command_line(const std::vector<std::string>& args, const Complaint& complain) {
  const auto say = [&complain](const std::string& text) {
    if (complain) {
      complain(text);
    } else {
      std::fputs(text.c_str(), stderr);
    }
  };
  auto options = parse_cli(args);
  if (!options) {
    say("memdiagd: " + options.error().message + "\n" + usage_text());
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
#ifndef _WIN32
  if (options->console) {
    say("memdiagd: --console is for memdiagd.exe on Windows (here it always runs in the foreground)\n");
    return 2;
  }
#endif
  auto config = resolve_config(*options);
  if (!config) {
    say("memdiagd: invalid config: " + config.error().to_string() + "\n");
    return 2;
  }
  // The web config is checked whole here (certificates and keys read, hashes' form), so a bad
  // one stops the start (and fails --check-config) instead of refusing every client later.
  if (!config->web_config_file.empty()) {
    if (auto web = load_web_security(config->web_config_file); !web) {
      say("memdiagd: invalid web config: " + web.error().to_string() + "\n");
      return 2;
    }
  }
#ifdef _WIN32
  if (!config->unix_socket.empty()) {
    say("memdiagd: invalid config: web.unix_socket: not supported on Windows (use web.listen_address)\n");
    return 2;
  }
#endif
  if (options->check_config) {
    if (options->config_path) std::printf("%s: ok\n", config->file.c_str());
    if (!config->web_config_file.empty()) std::printf("%s: ok\n", config->web_config_file.c_str());
    return 0;
  }
  set_log_level(config->log_level);
  if (options->log_file) {
    if (auto logging = add_log_file(*options->log_file); !logging) {
      say("memdiagd: --log.file: " + logging.error().message + "\n");
      return 2;
    }
  }
  return Startup{std::move(options).value(), std::move(config).value()};
}

}  // namespace memdiag
