// SPDX-License-Identifier: Apache-2.0
// The arguments of memdiagd's subcommands (diagnose, record): `--flag VALUE` or `--flag=VALUE`
// for the flags that take a value, bare switches (`--help`, `-h` and the subcommand's own), an
// unknown one refused with "did you mean" for a typo. Each subcommand then reads the pairs.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probes/core/expected.hpp"

namespace memdiag {

struct SubcommandArg {
  std::string flag;   // "--config"; a switch: "--allow-truncated", "--help" (also for -h)
  std::string value;  // empty for a switch
};

Expected<std::vector<SubcommandArg>> split_subcommand_args(const std::vector<std::string>& args,
                                                           const std::vector<std::string_view>& with_value,
                                                           const std::vector<std::string_view>& switches = {});

// Where the .deb installs the daemon's config. diagnose and record read it when no --config is
// given and it is there, so on an installed node they find the daemon where it listens and
// sample what it samples without being told.
inline constexpr const char* kInstalledConfigPath = "/etc/memdiag/memdiagd.yaml";

// `given`, else the installed config when it is readable, else none (the defaults).
std::optional<std::string> config_or_installed(const std::optional<std::string>& given);

}  // namespace memdiag
