// SPDX-License-Identifier: Apache-2.0
// Which cgroups get their detail series: the first ten by importance, and beyond them those
// that stall, have a role in a stalling scope, or are within 10 % of their limit.
#include <gtest/gtest.h>

#include <string>

#include "exporters/prometheus/cgroup_detail.hpp"

namespace memdiag::prom {
namespace {

CgroupSample cgroup(std::string path, std::uint64_t usage = 0, std::optional<std::uint64_t> limit = std::nullopt) {
  CgroupSample c;
  c.path = std::move(path);
  c.usage_bytes = usage;
  c.limit_bytes = limit;
  c.limited = limit.has_value();
  return c;
}

TEST(CgroupDetail, TheFirstOnesAndThoseThatMatterNow) {
  CgroupSection section;
  for (int i = 0; i < 30; ++i) section.cgroups.push_back(cgroup("/c" + std::to_string(i), 100, 1000));
  section.cgroups[20].usage_bytes = 900;  // at 90 % of its limit
  section.cgroups[21].usage_bytes = 899;  // just below
  DerivedFigures derived;
  CgroupScope stalling;
  stalling.cgroup = "/c22";
  stalling.stall.level = VerdictLevel::kLow;
  derived.cgroup_scopes.push_back(stalling);
  CgroupScope calm;
  calm.cgroup = "/c23";
  derived.cgroup_scopes.push_back(calm);
  derived.node_scope.emplace();
  ScopeMember victim;
  victim.cgroup = "/c24";
  victim.role = PressureRole::kVictim;
  derived.node_scope->members.push_back(victim);
  ScopeMember contributor;
  contributor.cgroup = "/c25";
  contributor.role = PressureRole::kContributor;
  stalling.analysis.members.push_back(contributor);
  derived.cgroup_scopes.push_back(stalling);

  const auto chosen = detailed_cgroups(section, derived);
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(chosen.contains("/c" + std::to_string(i))) << i;
  EXPECT_TRUE(chosen.contains("/c20"));   // near its limit
  EXPECT_FALSE(chosen.contains("/c21"));
  EXPECT_TRUE(chosen.contains("/c22"));   // stalling
  EXPECT_FALSE(chosen.contains("/c23"));  // judged, calm
  EXPECT_TRUE(chosen.contains("/c24"));   // a victim of the node
  EXPECT_TRUE(chosen.contains("/c25"));   // a contributor in a cgroup scope
  EXPECT_FALSE(chosen.contains("/c29"));
  EXPECT_EQ(chosen.size(), 14u);  // the ten, /c20, /c22, /c24, /c25
}

TEST(CgroupDetail, UnlimitedCgroupsAreNeverNearALimit) {
  CgroupSection section;
  for (int i = 0; i < 12; ++i) section.cgroups.push_back(cgroup("/u" + std::to_string(i), 1ull << 40));
  const auto chosen = detailed_cgroups(section, DerivedFigures{}, 3);
  EXPECT_EQ(chosen.size(), 3u);
  EXPECT_TRUE(chosen.contains("/u2"));
  EXPECT_FALSE(chosen.contains("/u3"));
}

}  // namespace
}  // namespace memdiag::prom
