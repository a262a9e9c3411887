// SPDX-License-Identifier: Apache-2.0
// Which promises can come due on the node: cap_promises (limits cap what limited cgroups can
// draw), the overcommit model charging only that, copy-on-write sharing and uncharged
// reservations apart (derive_figures), and the payment forecast (promise_payment.hpp).
#include <gtest/gtest.h>

#include <chrono>

#include "probes/analysis/derive_figures.hpp"
#include "probes/analysis/overcommit_model.hpp"
#include "probes/analysis/promise_capping.hpp"
#include "probes/analysis/promise_payment.hpp"
#include "probes/core/cgroup_limit_tree.hpp"

namespace memdiag {
namespace {

constexpr std::uint64_t kGiB = 1ull << 30;
constexpr std::uint64_t kMiB = 1ull << 20;

CgroupLimit limit(std::string path, std::uint64_t limit_bytes, std::uint64_t usage, std::uint64_t effective,
                  std::uint64_t headroom) {
  return CgroupLimit{std::move(path), limit_bytes, usage, effective, headroom};
}

// `resident`: what of the private commit is already backed (RssAnon + swap).
CgroupProcessTotals promise(std::string cgroup, std::uint64_t unbacked, std::uint64_t resident = 0) {
  CgroupProcessTotals t;
  t.cgroup = std::move(cgroup);
  t.processes = 1;
  t.rss_anon_bytes = resident;
  t.committed_private_bytes = unbacked + resident;
  t.unbacked_promise_bytes = unbacked;
  return t;
}

TEST(PromiseCapping, EachLimitedCgroupChargesAtMostItsHeadroom) {
  // The review's cap run: five cgroups limited 4 GiB, each promised 20 GiB, using 100 MiB.
  std::vector<CgroupLimit> limits;
  std::vector<CgroupProcessTotals> sums;
  for (int i = 1; i <= 5; ++i) {
    const std::string path = "/cap" + std::to_string(i);
    limits.push_back(limit(path, 4 * kGiB, 100 * kMiB, 4 * kGiB, 4 * kGiB - 100 * kMiB));
    sums.push_back(promise(path, 20 * kGiB));
  }
  sums.push_back(promise("/free", 3 * kGiB));  // not limited: all of it can come due
  const analysis::PromiseCapping c = analysis::cap_promises(limits, sums, 3);
  EXPECT_EQ(c.capped_by_limits_bytes, 5 * (16 * kGiB + 100 * kMiB));
  EXPECT_EQ(c.over_limit_total, 5u);
  ASSERT_EQ(c.over_limit.size(), 3u) << "bounded";
  EXPECT_EQ(c.over_limit[0].cgroup, "/cap1") << "equal excess: by path";
  EXPECT_EQ(c.over_limit[0].committed_private_bytes, 20 * kGiB);
  EXPECT_EQ(c.over_limit[0].unbacked_promise_bytes, 20 * kGiB);
  EXPECT_EQ(c.over_limit[0].effective_limit_bytes, 4 * kGiB);
  EXPECT_EQ(c.over_limit[0].headroom_bytes, 4 * kGiB - 100 * kMiB);
}

TEST(PromiseCapping, InnerLimitsCapFirstAndTheParentCapsWhatIsLeft) {
  // A 4 GiB parent (1 GiB used) with children: /p/a limited 2 GiB (its headroom 2, the
  // parent's 3: 2), promised 10; /p/b unlimited, promised 0.5; /p/c/d two levels down under a
  // 1 GiB limit on /p/c, promised 5. The parent charges min(3, 2 + 0.5 + 1) = 3.
  std::vector<CgroupLimit> limits = {
      limit("/p", 4 * kGiB, 1 * kGiB, 4 * kGiB, 3 * kGiB),
      limit("/p/a", 2 * kGiB, 0, 2 * kGiB, 2 * kGiB),
      limit("/p/c", 1 * kGiB, 0, 1 * kGiB, 1 * kGiB),
  };
  std::vector<CgroupProcessTotals> sums = {promise("/p/a", 10 * kGiB), promise("/p/b", kGiB / 2),
                                           promise("/p/c/d", 5 * kGiB), promise("/elsewhere", 7 * kGiB)};
  const analysis::PromiseCapping c = analysis::cap_promises(limits, sums);
  const std::uint64_t raw = 10 * kGiB + kGiB / 2 + 5 * kGiB;
  EXPECT_EQ(c.capped_by_limits_bytes, raw - 3 * kGiB);
  ASSERT_EQ(c.over_limit_total, 3u);
  EXPECT_EQ(c.over_limit[0].cgroup, "/p");  // 15.5 over 4
  EXPECT_EQ(c.over_limit[0].unbacked_promise_bytes, raw);
  EXPECT_EQ(c.over_limit[1].cgroup, "/p/a");  // 10 over 2
  EXPECT_EQ(c.over_limit[2].cgroup, "/p/c");  // 5 over 1
}

TEST(PromiseCapping, ACgroupFullOfCacheIsNotListedForPromisesItsCacheCanPay) {
  // 4 GiB limit, 3.9 GiB used, mostly page cache: 100 MiB of headroom for the node, but its
  // processes' 1 GiB of private commit fits under the limit once cache is reclaimed. The node
  // is charged 100 MiB of it; the cgroup is no risk of its own.
  std::vector<CgroupLimit> limits = {limit("/cachey", 4 * kGiB, 3900 * kMiB, 4 * kGiB, 100 * kMiB)};
  const analysis::PromiseCapping c = analysis::cap_promises(limits, {promise("/cachey", 768 * kMiB, 256 * kMiB)});
  EXPECT_EQ(c.capped_by_limits_bytes, 668 * kMiB);
  EXPECT_EQ(c.over_limit_total, 0u);
  // Its processes' private commit past the limit (resident 3 GiB + 1.5 GiB promised): listed.
  const analysis::PromiseCapping full = analysis::cap_promises(limits, {promise("/cachey", 1536 * kMiB, 3 * kGiB)});
  ASSERT_EQ(full.over_limit_total, 1u);
  EXPECT_EQ(full.over_limit[0].committed_private_bytes, 4608 * kMiB);
  EXPECT_EQ(full.over_limit[0].unbacked_promise_bytes, 1536 * kMiB);
}

TEST(PromiseCapping, PromisesWithinTheHeadroomAreChargedInFull) {
  std::vector<CgroupLimit> limits = {limit("/roomy", 64 * kGiB, 0, 64 * kGiB, 64 * kGiB)};
  const analysis::PromiseCapping c = analysis::cap_promises(limits, {promise("/roomy/job", 8 * kGiB)});
  EXPECT_EQ(c.capped_by_limits_bytes, 0u);
  EXPECT_EQ(c.over_limit_total, 0u);
  EXPECT_EQ(analysis::cap_promises({}, {promise("/x", kGiB)}).capped_by_limits_bytes, 0u);
}

// 24 GiB RAM, no swap, 21 GiB available: the review's machine.
SystemMemory node(std::uint64_t committed, std::uint64_t backed) {
  SystemMemory m;
  m.physical_total_bytes = 24 * kGiB;
  m.physical_available_bytes = 21 * kGiB;
  m.commit_charge_bytes = committed;
  m.commit_limit_bytes = 12 * kGiB;
  m.commit_backed_bytes = backed;
  return m;
}

TEST(OvercommitModel, OnlyThePromiseThatCanComeDueIsCharged) {
  OvercommitPolicy always;
  always.mode = OvercommitMode::kAlways;
  // 103 GiB committed, 3 GiB backed: 100 GiB unbacked, 80 of it capped by limits, 8 shared
  // copy-on-write: 12 GiB can come due against 21 of supply.
  analysis::PromiseAdjustments a;
  a.cow_shared_bytes = 8 * kGiB;
  a.capped_by_limits_bytes = 80 * kGiB;
  a.cgroups_over_limit.push_back(CgroupOverLimit{"/cap1", 20 * kGiB, 20 * kGiB, 4 * kGiB, 4 * kGiB});
  a.cgroups_over_limit_total = 5;
  a.uncharged_reservation_processes = 1;
  a.uncharged_reservation_bytes = 10ull << 40;
  const OvercommitVerdict v = analysis::assess_overcommit(node(103 * kGiB, 3 * kGiB), always, std::nullopt, {}, a);
  EXPECT_EQ(*v.unbacked_bytes, 100 * kGiB);
  EXPECT_EQ(*v.cow_shared_bytes, 8 * kGiB);
  EXPECT_EQ(v.capped_by_limits_bytes, 80 * kGiB);
  EXPECT_EQ(*v.charged_unbacked_bytes, 12 * kGiB);
  EXPECT_DOUBLE_EQ(*v.unbacked_to_supply_ratio, 12.0 / 21.0);
  EXPECT_EQ(v.level, VerdictLevel::kLow) << "0.57 of the supply, not 4.8";
  EXPECT_EQ(v.cgroups_over_limit.size(), 1u);
  EXPECT_EQ(v.cgroups_over_limit_total, 5u);
  EXPECT_EQ(v.uncharged_reservation_bytes, 10ull << 40);

  // Without the adjustments, the old reading: all 100 GiB against 21, critical.
  const OvercommitVerdict old = analysis::assess_overcommit(node(103 * kGiB, 3 * kGiB), always, std::nullopt);
  EXPECT_EQ(*old.charged_unbacked_bytes, 100 * kGiB);
  EXPECT_EQ(old.level, VerdictLevel::kCritical);

  // What is separated never takes the charged figure below 0.
  a.cow_shared_bytes = 90 * kGiB;
  const OvercommitVerdict most = analysis::assess_overcommit(node(103 * kGiB, 3 * kGiB), always, std::nullopt, {}, a);
  EXPECT_EQ(*most.charged_unbacked_bytes, 0u);
  EXPECT_EQ(most.capped_by_limits_bytes, 10 * kGiB) << "only what the sharing left";
  EXPECT_EQ(most.level, VerdictLevel::kNone);
}

TEST(OvercommitModel, DeriveFiguresSeparatesSharingCapsAndReservationsFromTheSections) {
  Snapshot snap;
  snap.system_memory = node(40 * kGiB, 4 * kGiB);  // 36 GiB unbacked
  OvercommitPolicy always;
  always.mode = OvercommitMode::kAlways;
  snap.overcommit_policy = always;
  ProcessSection& p = snap.processes.emplace();
  p.rss_anon_bytes = 10 * kGiB;   // 8 GiB of it mapped by several processes
  p.anon_pages_bytes = 2 * kGiB;
  p.uncharged_reservation_processes = 1;
  p.uncharged_reservation_bytes = 1ull << 40;
  p.cgroups.push_back(promise("/cap", 20 * kGiB));
  p.cgroups.push_back(promise("/open", 6 * kGiB));
  CgroupSection& c = snap.cgroups.emplace();
  std::vector<CgroupLimitInput> in = {{"/", std::nullopt, 3 * kGiB}, {"/cap", 512 * kMiB, 0}, {"/open", std::nullopt, 0}};
  CgroupLimitTree tree = build_limit_tree(in, 256);
  c.effective_limits_sum_bytes = tree.effective_limits_sum_bytes;
  c.limits = tree.limits;
  c.leaf_limits_sum_bytes = 99 * kGiB;  // the old figure: not used when the effective one is there
  analysis::derive_figures(snap);
  const OvercommitVerdict& v = *snap.derived.overcommit;
  EXPECT_EQ(*v.unbacked_bytes, 36 * kGiB);
  EXPECT_EQ(*v.cow_shared_bytes, 8 * kGiB);
  EXPECT_EQ(v.capped_by_limits_bytes, 20 * kGiB - 512 * kMiB);
  EXPECT_EQ(*v.charged_unbacked_bytes, 36 * kGiB - 8 * kGiB - (20 * kGiB - 512 * kMiB));
  EXPECT_EQ(v.uncharged_reservation_processes, 1u);
  ASSERT_EQ(v.cgroups_over_limit.size(), 1u);
  EXPECT_EQ(v.cgroups_over_limit[0].cgroup, "/cap");
  EXPECT_EQ(v.cgroups_over_limit[0].headroom_bytes, 512 * kMiB);
  EXPECT_DOUBLE_EQ(*snap.derived.cgroup_limit_overcommit_ratio, 0.5 / 24);

  // A recording from before the RssAnon sum and the limit tree: nothing separated.
  p.rss_anon_bytes = 0;
  p.anon_pages_bytes.reset();
  c.limits.clear();
  c.effective_limits_sum_bytes.reset();
  analysis::derive_figures(snap);
  EXPECT_FALSE(snap.derived.overcommit->cow_shared_bytes);
  EXPECT_EQ(*snap.derived.overcommit->charged_unbacked_bytes, 36 * kGiB);
  EXPECT_DOUBLE_EQ(*snap.derived.cgroup_limit_overcommit_ratio, 99.0 / 24);
}

using Clock = std::chrono::system_clock;

TEST(PromisePayment, ARisingBackedMemoryIsPaymentAndAFallingOrFlatOneIsNot) {
  analysis::ForecastSettings settings;  // 60 s window, R^2 0.8, 1 h horizon
  const Clock::time_point t0 = Clock::time_point{} + std::chrono::hours(1000);
  analysis::PaymentTrend rising, flat, falling;
  std::optional<double> r, f, g;
  for (int s = 0; s <= 60; ++s) {
    const auto at = t0 + std::chrono::seconds(s);
    r = rising.add(at, 2.0 * kGiB + s * 50.0 * kMiB, settings);           // 50 MiB/s paid
    f = flat.add(at, 2.0 * kGiB + (s % 2) * 1.0 * kMiB, settings);        // noise
    g = falling.add(at, 8.0 * kGiB - s * 100.0 * kMiB, settings);         // memory freed
  }
  ASSERT_TRUE(r);
  EXPECT_NEAR(*r, 50.0 * kMiB, 1.0);
  EXPECT_FALSE(f);
  EXPECT_FALSE(g);

  // While more can come due than the supply: supply / rate; otherwise nothing.
  EXPECT_NEAR(*analysis::promise_exhaustion_seconds(30.0 * kGiB, 20.0 * kGiB, r, settings), 20.0 * 1024 / 50, 1e-6);
  EXPECT_FALSE(analysis::promise_exhaustion_seconds(10.0 * kGiB, 20.0 * kGiB, r, settings));
  EXPECT_FALSE(analysis::promise_exhaustion_seconds(30.0 * kGiB, 20.0 * kGiB, std::nullopt, settings));
  EXPECT_FALSE(analysis::promise_exhaustion_seconds(30.0 * kGiB, 200000.0 * kGiB, r, settings)) << "past the horizon";
}

}  // namespace
}  // namespace memdiag
