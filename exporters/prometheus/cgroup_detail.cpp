// SPDX-License-Identifier: Apache-2.0
#include "exporters/prometheus/cgroup_detail.hpp"

namespace memdiag::prom {
namespace {

constexpr double kNearLimitFill = 0.9;

bool near_limit(const CgroupSample& c) {
  if (!c.limited || !c.limit_bytes || !c.usage_bytes || *c.limit_bytes == 0) return false;
  return static_cast<double>(*c.usage_bytes) >= kNearLimitFill * static_cast<double>(*c.limit_bytes);
}

}  // namespace

std::unordered_set<std::string_view> detailed_cgroups(const CgroupSection& section, const DerivedFigures& derived,
                                                      std::size_t top) {
  std::unordered_set<std::string_view> chosen;
  for (std::size_t i = 0; i < section.cgroups.size(); ++i) {
    const CgroupSample& c = section.cgroups[i];
    if (i < top || near_limit(c)) chosen.insert(c.path);
  }
  const auto members_of = [&chosen](const ScopeAnalysis& scope) {
    for (const ScopeMember& m : scope.members) chosen.insert(m.cgroup);
  };
  if (derived.node_scope) members_of(*derived.node_scope);
  for (const CgroupScope& scope : derived.cgroup_scopes) {
    if (scope.stall.level != VerdictLevel::kNone) chosen.insert(scope.cgroup);
    members_of(scope.analysis);
  }
  return chosen;
}

}  // namespace memdiag::prom
