// SPDX-License-Identifier: Apache-2.0
// Derived figures are computed from the snapshot's sections once, in probes/analysis.
#include <gtest/gtest.h>

#include "probes/analysis/derive_figures.hpp"
#include "probes/analysis/limit_overcommit.hpp"

namespace memdiag {
namespace {

TEST(LimitOvercommit, SumOfLeafLimitsOverPhysicalMemory) {
  CgroupSection cgroups;
  cgroups.leaf_limits_sum_bytes = 48ull << 30;
  SystemMemory memory;
  memory.physical_total_bytes = 32ull << 30;
  EXPECT_DOUBLE_EQ(*analysis::limit_overcommit_ratio(cgroups, memory), 1.5);
  memory.physical_total_bytes = 0;
  EXPECT_FALSE(analysis::limit_overcommit_ratio(cgroups, memory));
}

TEST(DeriveFigures, NeedsBothSectionsAndForgetsStaleFigures) {
  Snapshot snap;
  snap.derived.cgroup_limit_overcommit_ratio = 9;  // left over: derive_figures starts afresh
  snap.cgroups.emplace().leaf_limits_sum_bytes = 3 << 20;
  analysis::derive_figures(snap);
  EXPECT_FALSE(snap.derived.cgroup_limit_overcommit_ratio);  // no system memory section
  snap.system_memory.emplace().physical_total_bytes = 4 << 20;
  analysis::derive_figures(snap);
  EXPECT_DOUBLE_EQ(*snap.derived.cgroup_limit_overcommit_ratio, 0.75);
}

}  // namespace
}  // namespace memdiag
