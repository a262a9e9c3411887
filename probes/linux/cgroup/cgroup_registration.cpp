// SPDX-License-Identifier: Apache-2.0
#include "probes/linux/cgroup/cgroup_registration.hpp"

#include <string>
#include <vector>

#include "probes/linux/cgroup/cgroup_source.hpp"

namespace memdiag {
namespace {

// A list of glob patterns on cgroup paths, each starting with '/' or '*'.
OptionStatus read_patterns(const OptionValue& value, std::vector<std::string>& out) {
  auto patterns = text_items(value, "expected a list of glob patterns, like [\"/kubepods*\"]",
                             [](const OptionValue& item, const std::string& pattern, const auto&) -> OptionStatus {
                               if (pattern.empty() || (pattern.front() != '/' && pattern.front() != '*')) {
                                 return item.refuse("a pattern matches a cgroup path and starts with '/' or '*', got '" +
                                                    pattern + "'");
                               }
                               return Ok{};
                             });
  if (!patterns) return patterns.error();
  out = std::move(*patterns);
  return Ok{};
}

}  // namespace

SourceRegistration cgroup_registration() {
  return register_source(SourceSpec<CgroupOptions>{
      .name = "cgroup",
      .platform = Platform::kLinux,
      .keys =
          {
              {"max_depth",
               [](const OptionValue& value, CgroupOptions& options) {
                 return read_integer_between(value, 0, 32, options.cgroup_discovery.max_depth);
               }},
              {"include",
               [](const OptionValue& value, CgroupOptions& options) {
                 return read_patterns(value, options.cgroup_discovery.include);
               }},
              {"exclude",
               [](const OptionValue& value, CgroupOptions& options) {
                 return read_patterns(value, options.cgroup_discovery.exclude);
               }},
              {"max_cgroups",
               [](const OptionValue& value, CgroupOptions& options) {
                 return read_integer_between(value, 1, 100000, options.max_cgroups);
               }},
              {"max_watched",
               [](const OptionValue& value, CgroupOptions& options) {
                 return read_integer_between(value, 0, 1000, options.max_watched_cgroups);
               }},
          },
      .make = [](const SourceContext& context, const CgroupOptions& options) -> std::unique_ptr<Source> {
        return std::make_unique<CgroupSource>(context.paths, options);
      },
  });
}

}  // namespace memdiag
