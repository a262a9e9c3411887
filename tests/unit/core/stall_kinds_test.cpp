// SPDX-License-Identifier: Apache-2.0
// The one list of stall kinds (probes/core/stall_kinds.h): the C enum the BPF programs key
// their histograms by and the C++ enum and names generated from it agree, in order.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "probes/core/stall_kind.hpp"
#include "probes/core/stall_kinds.h"

namespace memdiag {
namespace {

static_assert(kStallKindCount == MEMDIAG_STALL_KIND_COUNT);
static_assert(static_cast<int>(StallKind::kDirect) == MEMDIAG_STALL_DIRECT);
static_assert(static_cast<int>(StallKind::kMemcg) == MEMDIAG_STALL_MEMCG);
static_assert(static_cast<int>(StallKind::kSoftLimit) == MEMDIAG_STALL_SOFTLIMIT);
static_assert(static_cast<int>(StallKind::kCompaction) == MEMDIAG_STALL_COMPACTION);
static_assert(static_cast<int>(StallKind::kThrottled) == MEMDIAG_STALL_THROTTLED);

// The `kind` label values every dashboard and alert uses: they must not change.
TEST(StallKinds, NamesInEnumOrder) {
  EXPECT_EQ(kStallKindCount, 5u);
  EXPECT_EQ(to_string(StallKind::kDirect), "direct");
  EXPECT_EQ(to_string(StallKind::kMemcg), "memcg");
  EXPECT_EQ(to_string(StallKind::kSoftLimit), "softlimit");
  EXPECT_EQ(to_string(StallKind::kCompaction), "compaction");
  EXPECT_EQ(to_string(StallKind::kThrottled), "throttled");
  EXPECT_EQ(to_string(static_cast<StallKind>(kStallKindCount)), "unknown");
  std::set<std::string_view> distinct(kStallKindNames.begin(), kStallKindNames.end());
  EXPECT_EQ(distinct.size(), kStallKindCount);
}

}  // namespace
}  // namespace memdiag
