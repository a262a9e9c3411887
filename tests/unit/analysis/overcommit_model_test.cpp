// SPDX-License-Identifier: Apache-2.0
// The overcommit-risk model (probes/analysis/overcommit_model.hpp) on hand-made figures, one
// per case the issue names: a quiet node, mode 1 with unbacked promises larger than the supply
// (the seed's training node), mode 2 near CommitLimit (and a small node whose last 100 MiB is
// critical whatever the ratio), cgroup limits past physical memory, and what is missing.
#include <gtest/gtest.h>

#include "probes/analysis/derive_figures.hpp"
#include "probes/analysis/overcommit_model.hpp"

namespace memdiag {
namespace {

constexpr std::uint64_t kGiB = 1ull << 30;
constexpr std::uint64_t kMiB = 1ull << 20;

OvercommitPolicy policy(OvercommitMode mode) {
  OvercommitPolicy p;
  p.mode = mode;
  return p;
}

// 64 GiB RAM, no swap, 4 GiB available; 100 GiB committed of which 56 GiB is backed.
SystemMemory training_node() {
  SystemMemory m;
  m.physical_total_bytes = 64 * kGiB;
  m.physical_available_bytes = 4 * kGiB;
  m.commit_charge_bytes = 100 * kGiB;
  m.commit_limit_bytes = 32 * kGiB;  // swap 0 + 64 GiB x 50 %: not enforced outside mode 2
  m.commit_backed_bytes = 56 * kGiB;
  return m;
}

bool has_reason(const OvercommitVerdict& v, std::string_view code) {
  for (const VerdictReason& r : v.reasons) {
    if (r.code == code) return true;
  }
  return false;
}

TEST(OvercommitModel, AQuietNodeIsNoneWithItsFigures) {
  SystemMemory m;
  m.physical_total_bytes = 24 * kGiB;
  m.physical_available_bytes = 20 * kGiB;
  m.swap_total_bytes = 2 * kGiB;
  m.swap_free_bytes = 2 * kGiB;
  m.commit_charge_bytes = 3 * kGiB;
  m.commit_limit_bytes = 14 * kGiB;
  m.commit_backed_bytes = 2 * kGiB;
  const auto v = analysis::assess_overcommit(m, policy(OvercommitMode::kHeuristic), 0.2);
  EXPECT_EQ(v.level, VerdictLevel::kNone);
  EXPECT_TRUE(v.reasons.empty());
  EXPECT_TRUE(v.mode_known);
  EXPECT_EQ(*v.unbacked_bytes, 1 * kGiB);
  EXPECT_EQ(v.supply_bytes, 22 * kGiB);
  EXPECT_DOUBLE_EQ(*v.unbacked_to_supply_ratio, 1.0 / 22);
  EXPECT_DOUBLE_EQ(*v.commit_limit_ratio, 3.0 / 14);
  EXPECT_DOUBLE_EQ(*v.commit_ratio, 3.0 / 26);
  EXPECT_DOUBLE_EQ(*v.cgroup_limit_overcommit_ratio, 0.2);
}

TEST(OvercommitModel, ModeAlwaysWithPromisesPastTheSupplyIsCriticalAndSaysNothingRefusedThem) {
  const auto v = analysis::assess_overcommit(training_node(), policy(OvercommitMode::kAlways), std::nullopt);
  EXPECT_EQ(*v.unbacked_bytes, 44 * kGiB);
  EXPECT_DOUBLE_EQ(*v.unbacked_to_supply_ratio, 11.0);
  EXPECT_EQ(v.level, VerdictLevel::kCritical);
  ASSERT_EQ(v.reasons.size(), 2u);
  EXPECT_EQ(v.reasons[0], (VerdictReason{overcommit_reason::kUnbackedPromises, 11.0, 4.0, VerdictLevel::kCritical}));
  EXPECT_EQ(v.reasons[1].code, overcommit_reason::kOvercommitAlways);
  // The limit is not enforced in this mode: its ratio is a figure, not a reason.
  EXPECT_DOUBLE_EQ(*v.commit_limit_ratio, 100.0 / 32);
  EXPECT_FALSE(has_reason(v, overcommit_reason::kCommitLimit));
}

TEST(OvercommitModel, EachUnbackedToSupplyBoundGivesItsLevel) {
  SystemMemory m = training_node();
  const struct {
    std::uint64_t backed_gib;  // unbacked = 100 - backed, supply 4
    VerdictLevel level;
  } cases[] = {{99, VerdictLevel::kNone}, {98, VerdictLevel::kLow}, {96, VerdictLevel::kMedium},
               {92, VerdictLevel::kHigh}, {84, VerdictLevel::kCritical}};
  for (const auto& c : cases) {
    m.commit_backed_bytes = c.backed_gib * kGiB;
    const auto v = analysis::assess_overcommit(m, policy(OvercommitMode::kHeuristic), std::nullopt);
    EXPECT_EQ(v.level, c.level) << "unbacked " << (100 - c.backed_gib) << " GiB";
    EXPECT_FALSE(has_reason(v, overcommit_reason::kOvercommitAlways)) << "mode 0 refuses impossible requests";
  }
}

TEST(OvercommitModel, ModeNeverNearItsLimitIsAboutTheLimitNotTheUnbackedPromise) {
  SystemMemory m = training_node();
  m.commit_limit_bytes = 40 * kGiB;
  m.commit_charge_bytes = 38 * kGiB + 512 * kMiB;  // 0.9625 of the limit
  m.commit_backed_bytes = 6 * kGiB;                 // 32.5 GiB unbacked: 8x the supply
  const auto v = analysis::assess_overcommit(m, policy(OvercommitMode::kNever), std::nullopt);
  EXPECT_EQ(v.level, VerdictLevel::kHigh);
  ASSERT_EQ(v.reasons.size(), 1u);
  EXPECT_EQ(v.reasons[0], (VerdictReason{overcommit_reason::kCommitLimit, 0.9625, 0.95, VerdictLevel::kHigh}));
  EXPECT_DOUBLE_EQ(*v.unbacked_to_supply_ratio, 32.5 / 4);  // still exported
}

TEST(OvercommitModel, ModeNeverWithLessThan100MiBLeftIsCriticalWhateverTheRatio) {
  SystemMemory m;
  m.physical_total_bytes = 2 * kGiB;
  m.physical_available_bytes = 300 * kMiB;
  m.commit_limit_bytes = 1 * kGiB;
  m.commit_charge_bytes = 950 * kMiB;  // 0.928: medium by ratio, 74 MiB left
  m.commit_backed_bytes = 900 * kMiB;
  const auto v = analysis::assess_overcommit(m, policy(OvercommitMode::kNever), std::nullopt);
  EXPECT_EQ(v.level, VerdictLevel::kCritical);
  ASSERT_EQ(v.reasons.size(), 1u);
  EXPECT_EQ(v.reasons[0].code, overcommit_reason::kCommitLimit);
  EXPECT_DOUBLE_EQ(v.reasons[0].threshold, 924.0 / 1024);  // the ratio at which 100 MiB is left

  m.commit_charge_bytes = 900 * kMiB;  // 124 MiB left, 0.879: low
  EXPECT_EQ(analysis::assess_overcommit(m, policy(OvercommitMode::kNever), std::nullopt).level, VerdictLevel::kLow);
}

TEST(OvercommitModel, CgroupLimitsPastPhysicalMemoryAreLowThenMedium) {
  SystemMemory m;
  m.physical_total_bytes = 8 * kGiB;
  m.physical_available_bytes = 6 * kGiB;
  auto v = analysis::assess_overcommit(m, policy(OvercommitMode::kHeuristic), 1.3);
  EXPECT_EQ(v.level, VerdictLevel::kLow);
  ASSERT_EQ(v.reasons.size(), 1u);
  EXPECT_EQ(v.reasons[0], (VerdictReason{overcommit_reason::kCgroupLimits, 1.3, 1.0, VerdictLevel::kLow}));
  v = analysis::assess_overcommit(m, policy(OvercommitMode::kHeuristic), 2.5);
  EXPECT_EQ(v.level, VerdictLevel::kMedium);
  EXPECT_EQ(analysis::assess_overcommit(m, policy(OvercommitMode::kHeuristic), 0.99).level, VerdictLevel::kNone);
}

TEST(OvercommitModel, ReasonsComeHighestFirst) {
  const auto v = analysis::assess_overcommit(training_node(), policy(OvercommitMode::kHeuristic), 1.2);
  ASSERT_EQ(v.reasons.size(), 2u);
  EXPECT_EQ(v.reasons[0].code, overcommit_reason::kUnbackedPromises);
  EXPECT_EQ(v.reasons[1].code, overcommit_reason::kCgroupLimits);
  EXPECT_EQ(v.level, VerdictLevel::kCritical);
}

TEST(OvercommitModel, WhatIsMissingIsAbsentNotZero) {
  SystemMemory m;
  m.physical_total_bytes = 8 * kGiB;
  m.physical_available_bytes = 6 * kGiB;
  auto v = analysis::assess_overcommit(m, std::nullopt, std::nullopt);
  EXPECT_FALSE(v.mode_known);
  EXPECT_EQ(v.mode, OvercommitMode::kHeuristic);
  EXPECT_FALSE(v.unbacked_bytes);
  EXPECT_FALSE(v.unbacked_to_supply_ratio);
  EXPECT_FALSE(v.commit_limit_ratio);
  EXPECT_EQ(v.supply_bytes, 6 * kGiB);
  EXPECT_EQ(v.level, VerdictLevel::kNone);

  // Backed beyond the charge (pages not charged, e.g. MAP_NORESERVE): unbacked is 0, not negative.
  m.commit_charge_bytes = 1 * kGiB;
  m.commit_backed_bytes = 2 * kGiB;
  v = analysis::assess_overcommit(m, std::nullopt, std::nullopt);
  EXPECT_EQ(*v.unbacked_bytes, 0u);
  EXPECT_DOUBLE_EQ(*v.unbacked_to_supply_ratio, 0);

  // Nothing to supply: the ratio is absent, not infinite.
  m.physical_available_bytes = 0;
  v = analysis::assess_overcommit(m, std::nullopt, std::nullopt);
  EXPECT_FALSE(v.unbacked_to_supply_ratio);
}

TEST(OvercommitModel, DeriveFiguresFillsTheVerdictFromTheSnapshot) {
  Snapshot snap;
  analysis::derive_figures(snap);
  EXPECT_FALSE(snap.derived.overcommit);  // no system memory section
  snap.system_memory = training_node();
  snap.overcommit_policy = policy(OvercommitMode::kAlways);
  snap.cgroups.emplace().leaf_limits_sum_bytes = 96 * kGiB;
  analysis::derive_figures(snap);
  ASSERT_TRUE(snap.derived.overcommit);
  EXPECT_EQ(snap.derived.overcommit->level, VerdictLevel::kCritical);
  EXPECT_DOUBLE_EQ(*snap.derived.overcommit->cgroup_limit_overcommit_ratio, 1.5);
  EXPECT_TRUE(has_reason(*snap.derived.overcommit, overcommit_reason::kCgroupLimits));

  analysis::OvercommitThresholds lax;
  lax.unbacked_to_supply = {20, 30, 40, 50};
  lax.cgroup_limit_overcommit = {2, 3, 4, 5};
  analysis::derive_figures(snap, lax);
  EXPECT_EQ(snap.derived.overcommit->level, VerdictLevel::kNone) << "thresholds are the caller's";
}

}  // namespace
}  // namespace memdiag
