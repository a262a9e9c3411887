// SPDX-License-Identifier: Apache-2.0
#include "probes/canary/canary_registration.hpp"

#include <algorithm>
#include <string>

#include "probes/canary/canary_setting_keys.hpp"
#include "probes/canary/canary_source.hpp"

namespace memdiag {
namespace {

// A child process runs in each listed cgroup, so the list is short.
constexpr std::size_t kMaxCgroups = 32;

// Memory cgroup paths, each absolute, without "..", each once.
OptionStatus read_cgroups(const OptionValue& value, std::vector<std::string>& out) {
  auto paths = text_items(
      value, "expected a list of cgroup paths, like [\"/kubepods/pod-x\"]",
      [](const OptionValue& item, const std::string& path, const std::vector<std::string>& earlier) -> OptionStatus {
        if (path.size() < 2 || path.front() != '/' || path.find("..") != std::string::npos) {
          return item.refuse("a cgroup path starting with '/' below the hierarchy root, without '..', got '" + path +
                             "'");
        }
        if (std::find(earlier.begin(), earlier.end(), path) != earlier.end()) {
          return item.refuse("'" + path + "' is listed twice");
        }
        return Ok{};
      });
  if (!paths) return paths.error();
  if (paths->size() > kMaxCgroups) {
    return value.refuse("at most " + std::to_string(kMaxCgroups) + " cgroups, got " + std::to_string(paths->size()));
  }
  out = std::move(*paths);
  return Ok{};
}

}  // namespace

SourceRegistration canary_registration() {
  return register_source(SourceSpec<CanarySettings>{
      .name = "canary",
      .platform = Platform::kLinux,
      .keys =
          {
              {"interval", canary::read_interval},
              {"working_set_bytes", canary::read_working_set_bytes},
              {"ceiling_bytes", canary::read_ceiling_bytes},
              {"backoff_psi_full",
               [](const OptionValue& value, CanarySettings& settings) -> OptionStatus {
                 auto percent = value.number();
                 if (!percent) return percent.error();
                 if (!(*percent >= 0 && *percent <= 100)) {
                   return value.refuse("a percentage from 0 to 100, got " + value.text().value());
                 }
                 settings.backoff_psi_full = *percent;
                 return Ok{};
               }},
              {"cgroups",
               [](const OptionValue& value, CanarySettings& settings) {
                 return read_cgroups(value, settings.cgroups);
               }},
              {"restart_after",
               [](const OptionValue& value, CanarySettings& settings) -> OptionStatus {
                 auto after = value.duration();
                 if (!after) return after.error();
                 if (*after < std::chrono::seconds(1) || *after > std::chrono::hours(1)) {
                   return value.refuse("between 1s and 1h");
                 }
                 settings.restart_after = *after;
                 return Ok{};
               }},
          },
      .check_together = canary::check_sizes,
      .make = [](const SourceContext& context, const CanarySettings& settings) {
        return canary::make_canary_source(context.paths, settings);
      },
  });
}

}  // namespace memdiag
