// SPDX-License-Identifier: Apache-2.0
#include "daemon/subcommand_args.hpp"

#include <unistd.h>

#include <algorithm>
#include <optional>

#include "daemon/config_values.hpp"

namespace memdiag {

Expected<std::vector<SubcommandArg>> split_subcommand_args(const std::vector<std::string>& args,
                                                           const std::vector<std::string_view>& with_value,
                                                           const std::vector<std::string_view>& switches) {
  const auto known = [](const std::vector<std::string_view>& list, std::string_view flag) {
    return std::find(list.begin(), list.end(), flag) != list.end();
  };
  std::vector<SubcommandArg> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    std::optional<std::string> value;
    if (const auto eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    }
    if (flag == "--help" || flag == "-h" || known(switches, flag)) {
      if (value) return make_error(flag + " takes no value");
      out.push_back({flag == "-h" ? "--help" : flag, ""});
      continue;
    }
    if (!known(with_value, flag)) {
      std::string message = "unknown argument '" + args[i] + "'";
      std::vector<std::string_view> all = with_value;
      all.insert(all.end(), switches.begin(), switches.end());
      if (auto hint = closest_match(flag, all)) message += "; did you mean '" + *hint + "'?";
      return make_error(message);
    }
    if (!value) {
      if (i + 1 >= args.size()) return make_error(flag + " needs a value");
      value = args[++i];
    }
    out.push_back({flag, *value});
  }
  return out;
}

std::optional<std::string> config_or_installed(const std::optional<std::string>& given) {
  if (given) return given;
  if (::access(kInstalledConfigPath, R_OK) == 0) return std::string(kInstalledConfigPath);
  return std::nullopt;
}

}  // namespace memdiag
