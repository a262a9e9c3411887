// SPDX-License-Identifier: Apache-2.0
// Command line of memdiagd (docs/configuration.md). Flags override the config file.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "daemon/config.hpp"
#include "probes/core/expected.hpp"

namespace memdiag {

struct CliOptions {
  std::optional<std::string> config_path;
  std::optional<std::string> listen_address;
  std::optional<std::string> web_config_file;  // --web.config.file (empty: none, over the config's)
  std::optional<std::string> unix_socket;      // --web.unix-socket (empty: none, over the config's)
  std::optional<std::string> procfs;
  std::optional<std::string> sysfs;
  std::optional<std::string> log_level;
  std::optional<std::string> log_file;  // also log to this file (appended)
  bool console = false;                 // Windows: run in the foreground, never as a service
  bool check_config = false;
  bool once = false;
  bool version = false;
  bool help = false;
};

Expected<CliOptions> parse_cli(const std::vector<std::string>& args);

// Applies flag values on top of a loaded config, validating them like config values.
ConfigResult apply_cli_overrides(Config config, const CliOptions& options);

// The configuration the flags ask for: the file (or defaults) with the flags on top.
ConfigResult resolve_config(const CliOptions& options);

std::string usage_text();

}  // namespace memdiag
