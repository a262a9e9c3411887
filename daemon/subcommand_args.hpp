// SPDX-License-Identifier: Apache-2.0
// The arguments of memdiagd's subcommands (diagnose, record): `--flag VALUE` or `--flag=VALUE`
// for the flags that take a value, bare switches (`--help`, `-h` and the subcommand's own), an
// unknown one refused with "did you mean" for a typo. Each subcommand then reads the pairs.
#pragma once

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

}  // namespace memdiag
