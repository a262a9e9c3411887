// SPDX-License-Identifier: Apache-2.0
// The part of memdiagd's start that both platforms share: the command line parsed, --help,
// --version and --check-config answered, the config resolved, the log level and log file set.
// What is left is to run: once, as a daemon (Linux), as a service or in a console (Windows).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "daemon/cli.hpp"
#include "daemon/config.hpp"
#include "probes/core/expected.hpp"

namespace memdiag {

struct Startup {
  CliOptions options;
  Config config;
};

// Where start_from_command_line says what is wrong: the text as a console shows it (newlines
// included). Empty: stderr. A Windows service, which has no console, logs it instead.
using Complaint = std::function<void(const std::string&)>;

// The options and config to run with, or the exit code to leave with at once: 0 after --help,
// --version or a config that checks out; 2 for a bad command line, config or log file (the
// reason to `complain`).
Expected<Startup, int> start_from_command_line(const std::vector<std::string>& args, const Complaint& complain = {});

}  // namespace memdiag
