// SPDX-License-Identifier: Apache-2.0
// build_limit_tree: effective limits, headroom and the limit sum that counts each capped
// subtree once, on hand-made hierarchies.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "probes/core/cgroup_limit_tree.hpp"

namespace memdiag {
namespace {

constexpr std::uint64_t kGiB = 1ull << 30;

const CgroupLimit* find(const CgroupLimitTree& t, const std::string& path) {
  for (const CgroupLimit& l : t.limits) {
    if (l.path == path) return &l;
  }
  return nullptr;
}

TEST(CgroupLimitTree, ChildrenUnderASmallerParentCountOnceAtTheParentsCap) {
  // The review's recipe: a 4 GiB parent with 13 children limited 4 GiB each.
  std::vector<std::string> paths = {"/", "/capped"};
  for (int i = 0; i < 13; ++i) paths.push_back("/capped/c" + std::to_string(i));
  std::vector<CgroupLimitInput> in;
  in.push_back({paths[0], std::nullopt, 10 * kGiB});
  in.push_back({paths[1], 4 * kGiB, 1 * kGiB});
  for (int i = 0; i < 13; ++i) in.push_back({paths[2 + i], 4 * kGiB, i == 0 ? kGiB / 2 : 0});
  const CgroupLimitTree t = build_limit_tree(in, 256);
  EXPECT_EQ(t.effective_limits_sum_bytes, 4 * kGiB);  // not 52 GiB
  ASSERT_EQ(t.limits.size(), 14u);
  const CgroupLimit* c0 = find(t, "/capped/c0");
  ASSERT_NE(c0, nullptr);
  EXPECT_EQ(c0->limit_bytes, 4 * kGiB);
  EXPECT_EQ(c0->effective_limit_bytes, 4 * kGiB);
  EXPECT_EQ(c0->headroom_bytes, 3 * kGiB) << "the parent has 3 GiB left, the child 3.5";
  const CgroupLimit* c5 = find(t, "/capped/c5");
  EXPECT_EQ(c5->headroom_bytes, 3 * kGiB);
}

TEST(CgroupLimitTree, LeavesCountTheirLimitsAndUnlimitedLeavesOnlyUnderALimit) {
  std::vector<CgroupLimitInput> in = {
      {"/", std::nullopt, 0},
      {"/a", 1 * kGiB, 0},                // a limited leaf: 1
      {"/b", 2 * kGiB, 0},                // a limited leaf: 2
      {"/free", std::nullopt, 0},         // an unlimited leaf at the top: nothing
      {"/p", 8 * kGiB, 0},                // a limited parent ...
      {"/p/x", 1 * kGiB, 0},              // ... with a 1 GiB child
      {"/p/open", std::nullopt, 0},       // ... and an unlimited one: the parent caps the subtree at 8
      {"/q", 16 * kGiB, 0},               // a large parent of two small children: 2 + 3
      {"/q/y", 2 * kGiB, 0},
      {"/q/z", 3 * kGiB, 0},
      {"/r", std::nullopt, 0},            // an unlimited parent of a limited child
      {"/r/w", 5 * kGiB, 0},
      {"/deep/er/leaf", 7 * kGiB, 0},     // its ancestors not discovered: nearest is "/"
  };
  const CgroupLimitTree t = build_limit_tree(in, 256);
  EXPECT_EQ(t.effective_limits_sum_bytes, (1 + 2 + 8 + 5 + 5 + 7) * kGiB);
  EXPECT_EQ(find(t, "/p/x")->effective_limit_bytes, 1 * kGiB);
  EXPECT_EQ(find(t, "/r/w")->effective_limit_bytes, 5 * kGiB);
  EXPECT_EQ(find(t, "/q/z")->headroom_bytes, 3 * kGiB);
  EXPECT_EQ(find(t, "/free"), nullptr) << "only limited cgroups are listed";
}

TEST(CgroupLimitTree, UsageBeyondTheLimitLeavesNoHeadroomAndTheListIsCappedShallowestFirst) {
  std::vector<CgroupLimitInput> in = {
      {"/a", 1 * kGiB, 2 * kGiB},
      {"/a/b", 4 * kGiB, 0},
      {"/a/b/c", 4 * kGiB, 0},
      {"/z", 1 * kGiB, 0},
  };
  const CgroupLimitTree t = build_limit_tree(in, 3);
  EXPECT_EQ(t.limits_dropped, 1u);
  ASSERT_EQ(t.limits.size(), 3u);
  EXPECT_EQ(find(t, "/a/b/c"), nullptr) << "the deepest goes first";
  EXPECT_EQ(find(t, "/a")->headroom_bytes, 0u);
  EXPECT_EQ(find(t, "/a/b")->headroom_bytes, 0u);
  EXPECT_EQ(find(t, "/a/b")->effective_limit_bytes, 1 * kGiB);
  EXPECT_EQ(t.limits[0].path, "/a") << "ordered by path";
  EXPECT_EQ(t.effective_limits_sum_bytes, 2 * kGiB) << "the sum covers every cgroup given, kept or not";
}

}  // namespace
}  // namespace memdiag
