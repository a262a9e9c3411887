#include "probes/linux/cgroup/cgroup_registration.hpp"

#include <string>
#include <vector>

#include "probes/linux/cgroup/cgroup_source.hpp"

namespace memdiag {
namespace {

// A list of glob patterns on cgroup paths, each starting with '/' or '*'.
OptionStatus read_patterns(const OptionValue& value, std::vector<std::string>& out) {
  auto items = value.items("expected a list of glob patterns, like [\"/kubepods*\"]");
  if (!items) return items.error();
  std::vector<std::string> patterns;
  for (const auto& item : *items) {
    auto pattern = item->text();
    if (!pattern) return pattern.error();
    if (pattern->empty() || (pattern->front() != '/' && pattern->front() != '*')) {
      return item->refuse("a pattern matches a cgroup path and starts with '/' or '*', got '" + *pattern + "'");
    }
    patterns.push_back(std::move(*pattern));
  }
  out = std::move(patterns);
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
               [](const OptionValue& value, CgroupOptions& options) -> OptionStatus {
                 auto depth = integer_between(value, 0, 32);
                 if (!depth) return depth.error();
                 options.cgroup_discovery.max_depth = static_cast<int>(*depth);
                 return Ok{};
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
               [](const OptionValue& value, CgroupOptions& options) -> OptionStatus {
                 auto cap = integer_between(value, 1, 100000);
                 if (!cap) return cap.error();
                 options.max_cgroups = static_cast<std::size_t>(*cap);
                 return Ok{};
               }},
              {"max_watched",
               [](const OptionValue& value, CgroupOptions& options) -> OptionStatus {
                 auto watched = integer_between(value, 0, 1000);
                 if (!watched) return watched.error();
                 options.max_watched_cgroups = static_cast<std::size_t>(*watched);
                 return Ok{};
               }},
          },
      .make = [](const SourceContext& context, const CgroupOptions& options) -> std::unique_ptr<Source> {
        return std::make_unique<CgroupSource>(context.paths, options);
      },
  });
}

}  // namespace memdiag
