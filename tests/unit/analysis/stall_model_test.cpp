// SPDX-License-Identifier: Apache-2.0
// The stall model (probes/analysis/stall_model.hpp) on hand-made snapshot sequences: the level
// from PSI differenced over the window (not avg10), causes with their numbers, a level that
// rises on the first sample of a stall and falls only after the hold, and what the model does
// with what is missing (no PSI, a counter reset).
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "probes/analysis/fault_baseline.hpp"
#include "probes/analysis/stall_model.hpp"

namespace memdiag {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::system_clock;

const Clock::time_point kStart = Clock::time_point(std::chrono::seconds(1'800'000'000));

struct Sample {
  double at_seconds = 0;
  std::optional<std::uint64_t> psi_some_us = 0;
  std::optional<std::uint64_t> psi_full_us = 0;
  std::map<std::string, std::uint64_t> vmstat = {{"nr_active_file", 100000}, {"nr_inactive_file", 100000}};
  std::optional<std::uint64_t> direct_ns;  // eBPF node total of direct reclaim
  std::optional<std::pair<std::uint64_t, std::uint64_t>> canary_faults;  // page faults: count, sum ns
};

std::shared_ptr<Snapshot> make(const Sample& in) {
  auto s = std::make_shared<Snapshot>();
  s->taken_at = kStart + std::chrono::milliseconds(static_cast<long>(in.at_seconds * 1000));
  if (in.psi_some_us) {
    PressureSection p;
    PsiResource memory;
    memory.some.total_us = *in.psi_some_us;
    if (in.psi_full_us) memory.full = PsiLine{0, 0, 0, *in.psi_full_us};
    p.resources[static_cast<std::size_t>(PsiResourceKind::kMemory)] = memory;
    s->pressure = p;
  }
  auto schema = std::make_shared<FieldSchema>();
  FieldTable table;
  for (const auto& [name, value] : in.vmstat) {
    schema->names.push_back(name);
    schema->kinds.push_back(FieldKind::kCounter);
    table.values.push_back(value);
  }
  table.schema = schema;
  s->vmstat = table;
  if (in.canary_faults) {
    CanarySection c;
    c.node.page_fault.count = in.canary_faults->first;
    c.node.page_fault.sum_ns = in.canary_faults->second;
    s->canary = c;
  }
  if (in.direct_ns) {
    ReclaimStallSection r;
    r.node[static_cast<std::size_t>(StallKind::kDirect)].sum_ns = *in.direct_ns;
    s->reclaim_stall = r;
  }
  return s;
}

// Feeds the samples in order, each with the ones before as its ring; the verdicts, their levels
// held as the diagnosis model holds them.
std::vector<StallVerdict> run(analysis::StallModel& model, const std::vector<Sample>& samples) {
  std::vector<SnapshotPtr> ring;
  std::vector<StallVerdict> out;
  analysis::LevelHold hold;
  for (const Sample& in : samples) {
    auto s = make(in);
    StallVerdict v = model.assess_instant(*s, ring);
    v.level = hold.update(s->taken_at, v.instant_level, model.thresholds().hold);
    out.push_back(std::move(v));
    ring.push_back(s);
  }
  return out;
}

const VerdictReason* reason(const StallVerdict& v, std::string_view code) {
  for (const VerdictReason& r : v.reasons) {
    if (r.code == code) return &r;
  }
  return nullptr;
}

// One sample a second; PSI some grows by some_per_s of each second from `from` to `to`.
std::vector<Sample> psi_run(int seconds, double some_per_s, double full_per_s, int from = 0, int to = 1 << 30) {
  std::vector<Sample> out;
  std::uint64_t some = 0, full = 0;
  for (int t = 0; t <= seconds; ++t) {
    if (t > from && t <= to) {
      some += static_cast<std::uint64_t>(some_per_s * 1e6);
      full += static_cast<std::uint64_t>(full_per_s * 1e6);
    }
    Sample s;
    s.at_seconds = t;
    s.psi_some_us = some;
    s.psi_full_us = full;
    out.push_back(s);
  }
  return out;
}

TEST(StallModel, AQuietNodeIsNoneAndSaysWhatItHad) {
  analysis::StallModel model;
  const auto v = run(model, psi_run(5, 0, 0)).back();
  EXPECT_EQ(v.level, VerdictLevel::kNone);
  EXPECT_TRUE(v.reasons.empty());
  EXPECT_DOUBLE_EQ(v.figures.window_seconds, 2.0);
  EXPECT_DOUBLE_EQ(*v.figures.psi_some_ratio, 0);
  EXPECT_EQ(v.signals, (std::vector<std::string_view>{stall_signal::kPsi, stall_signal::kVmstat}));
}

TEST(StallModel, PsiOverTheWindowSetsTheLevelWithItsNumber) {
  analysis::StallModel model;
  auto v = run(model, psi_run(4, 0.40, 0.02)).back();
  EXPECT_EQ(v.level, VerdictLevel::kHigh);
  ASSERT_NE(reason(v, stall_reason::kStallTime), nullptr);
  EXPECT_NEAR(reason(v, stall_reason::kStallTime)->value, 0.40, 1e-9);
  EXPECT_DOUBLE_EQ(reason(v, stall_reason::kStallTime)->threshold, 0.30);

  analysis::StallModel full_model;  // full 70 %: critical, and full is the figure given
  v = run(full_model, psi_run(4, 0.75, 0.70)).back();
  EXPECT_EQ(v.level, VerdictLevel::kCritical);
  EXPECT_NEAR(reason(v, stall_reason::kStallTime)->value, 0.70, 1e-9);
}

TEST(StallModel, RisesAtOnceAndReachesTheSustainedLevelWithin3s) {
  analysis::StallModel model;
  // Calm for 20 s, then 50 % stalled from second 20 on: the sample at 21 s already shows it (a
  // burst so far: low at most); three seconds in it has lasted, and is high.
  const auto verdicts = run(model, psi_run(24, 0.5, 0, 20));
  EXPECT_EQ(verdicts[20].level, VerdictLevel::kNone);
  EXPECT_EQ(verdicts[21].level, VerdictLevel::kLow) << "one second into the stall";
  EXPECT_EQ(verdicts[22].level, VerdictLevel::kMedium)
      << "two seconds: not yet sustained; 1 s of stall in the long window's 10 s is medium by itself";
  EXPECT_EQ(verdicts[23].level, VerdictLevel::kHigh) << "three sample intervals of stall: sustained";
  EXPECT_NEAR(reason(verdicts[23], stall_reason::kStallTime)->value, 0.5, 1e-9);
}

// Severity by time lost: half a second of full stall (a single task reclaiming on a quiet node)
// is 25 % of the window, high by PSI full's thresholds, but a burst: the window makes it low at
// most, and so does its share of the long window (5 % full). Bursts of half a second every 5 s
// read by their share of the long window: 10 % full, medium.
TEST(StallModel, ABriefBurstIsLowAndRecurringBurstsReadByTheirShare) {
  analysis::StallModel one;
  const auto burst = run(one, psi_run(20, 0.5, 0.5, 15, 16));
  VerdictLevel highest = VerdictLevel::kNone;
  for (const auto& v : burst) highest = std::max(highest, v.instant_level);
  EXPECT_EQ(highest, VerdictLevel::kLow);

  analysis::StallModel recurring;
  std::vector<Sample> samples;
  std::uint64_t total = 0;
  for (int t = 0; t <= 60; ++t) {
    if (t % 5 == 0 && t > 0) total += 500000;  // 0.5 s in the second before every fifth
    Sample s;
    s.at_seconds = t;
    s.psi_some_us = total;
    s.psi_full_us = total;
    samples.push_back(s);
  }
  const auto verdicts = run(recurring, samples);
  for (int t = 30; t <= 60; ++t) {
    EXPECT_LE(verdicts[t].level, VerdictLevel::kMedium) << t;
    EXPECT_GE(verdicts[t].level, VerdictLevel::kLow) << t;
  }
}

TEST(StallModel, FallsOnlyAfterTheHoldAndEasesOverTheLongWindow) {
  analysis::StallModel model;
  // 50 % stalled from 0 to 10 s, a 1 s pause at 5 s, then calm.
  auto samples = psi_run(40, 0.5, 0, 0, 10);
  for (std::size_t t = 6; t < samples.size(); ++t) *samples[t].psi_some_us -= 500000;  // second 6 had none
  const auto verdicts = run(model, samples);
  EXPECT_EQ(verdicts[2].level, VerdictLevel::kLow) << "not yet sustained";
  for (int t = 3; t <= 10; ++t) EXPECT_EQ(verdicts[t].level, VerdictLevel::kHigh) << t << " s: no flap on the pause";
  int none_at = -1, instant_none_at = -1;
  for (int t = 11; t < 41; ++t) {
    if (instant_none_at < 0 && verdicts[t].instant_level == VerdictLevel::kNone) instant_none_at = t;
    if (verdicts[t].level == VerdictLevel::kNone) {
      none_at = t;
      break;
    }
  }
  // The long window's share of the stall (4.5 s in the 10 s before 11 s) falls below the low
  // threshold once the stall is out of it; then the hold.
  EXPECT_EQ(instant_none_at, 20);
  EXPECT_EQ(none_at, 30) << "long window 10 s + hold 10 s after the stall ended at 10 s";
}

TEST(StallModel, WithoutPsiTheEbpfStallTimeSetsTheLevel) {
  analysis::StallModel model;
  std::vector<Sample> samples;
  for (int t = 0; t <= 3; ++t) {
    Sample s;
    s.at_seconds = t;
    s.psi_some_us.reset();
    s.psi_full_us.reset();
    s.direct_ns = static_cast<std::uint64_t>(t * 0.35e9);  // 0.35 s of direct reclaim per second
    samples.push_back(s);
  }
  const auto v = run(model, samples).back();
  EXPECT_EQ(v.level, VerdictLevel::kHigh);
  EXPECT_NEAR(reason(v, stall_reason::kStallTime)->value, 0.35, 1e-6);
  EXPECT_NEAR(reason(v, stall_reason::kDirectReclaim)->value, 0.35, 1e-6);
  EXPECT_EQ(std::count(v.signals.begin(), v.signals.end(), stall_signal::kPsi), 0);
  EXPECT_EQ(std::count(v.signals.begin(), v.signals.end(), stall_signal::kEbpf), 1);
}

TEST(StallModel, ThrashingIsRefaultsOverTheFileCacheAndAtMostMedium) {
  analysis::StallModel model;
  std::vector<Sample> samples = psi_run(10, 0.06, 0);  // tasks wait 6 % of the time: low
  for (std::size_t t = 0; t < samples.size(); ++t) {
    samples[t].vmstat["workingset_refault_file"] = t * 60000;  // 600k pages in 10 s over 200k cached: 3x
  }
  const auto v = run(model, samples).back();
  ASSERT_NE(reason(v, stall_reason::kThrashing), nullptr);
  EXPECT_NEAR(reason(v, stall_reason::kThrashing)->value, 3.0, 1e-9);
  EXPECT_EQ(v.level, VerdictLevel::kMedium);
}

TEST(StallModel, WithoutAnyStallMeasureRefaultsAloneAreThrashingUpToHighAndALowerBound) {
  analysis::StallModel model;
  std::vector<Sample> samples(11);
  for (std::size_t t = 0; t < samples.size(); ++t) {
    samples[t].at_seconds = static_cast<double>(t);
    samples[t].psi_some_us.reset();  // no PSI, no eBPF
    samples[t].vmstat["workingset_refault_file"] = t * 60000;
  }
  const auto v = run(model, samples).back();
  ASSERT_NE(reason(v, stall_reason::kThrashing), nullptr);
  // Without PSI the waits on refaults go unmeasured: 3x the file cache read back is high, and
  // the verdict says its level is a lower bound and what it missed.
  EXPECT_EQ(v.level, VerdictLevel::kHigh);
  EXPECT_TRUE(v.lower_bound);
  EXPECT_EQ(v.missing_signals, (std::vector<std::string_view>{stall_signal::kPsi, stall_signal::kEbpf}));
}

// A job streaming a file larger than its memory (as recorded on this machine: ~900k refaults a
// second, PSI some 1.5 %) refaults every page it reads again and waits for almost none.
TEST(StallModel, StreamingThroughThePageCacheWithoutStallsStaysNone) {
  analysis::StallModel model;
  std::vector<Sample> samples = psi_run(10, 0.015, 0);
  for (std::size_t t = 0; t < samples.size(); ++t) {
    samples[t].vmstat["pgscan_kswapd"] = t * 200000;  // kswapd keeps up, freeing what it scans
    samples[t].vmstat["pgsteal_kswapd"] = t * 195000;
    samples[t].vmstat["pgscan_direct"] = 0;
    samples[t].vmstat["pgsteal_direct"] = 0;
    samples[t].vmstat["workingset_refault_file"] = t * 900000;
  }
  const auto v = run(model, samples).back();
  EXPECT_EQ(v.level, VerdictLevel::kNone);
  EXPECT_EQ(reason(v, stall_reason::kThrashing), nullptr);
  EXPECT_GT(*v.figures.refault_ratio, 10.0);  // the figure is there; it is not a stall
  EXPECT_NEAR(*v.figures.reclaim_inefficiency, 0.025, 1e-9);
  EXPECT_EQ(reason(v, stall_reason::kReclaimInefficient), nullptr);
}

// Reclaim scanning 100k pages a second and freeing 2 % of them: what it takes is being taken
// back, or cannot be taken. Samples of `psi_some_share` PSI (none: no PSI at all).
std::vector<Sample> inefficient_reclaim(std::optional<double> psi_some_share) {
  std::vector<Sample> samples = psi_run(10, psi_some_share.value_or(0), 0);
  for (std::size_t t = 0; t < samples.size(); ++t) {
    if (!psi_some_share) samples[t].psi_some_us.reset();
    samples[t].vmstat["pgscan_kswapd"] = t * 60000;
    samples[t].vmstat["pgscan_direct"] = t * 40000;
    samples[t].vmstat["pgsteal_kswapd"] = t * 1500;
    samples[t].vmstat["pgsteal_direct"] = t * 500;
  }
  return samples;
}

TEST(StallModel, WithoutPsiReclaimFreeingLittleOfWhatItScansReachesHighAsALowerBound) {
  analysis::StallModel model;
  const auto v = run(model, inefficient_reclaim(std::nullopt)).back();
  ASSERT_NE(reason(v, stall_reason::kReclaimInefficient), nullptr);
  EXPECT_NEAR(reason(v, stall_reason::kReclaimInefficient)->value, 0.98, 1e-9);
  EXPECT_EQ(v.level, VerdictLevel::kHigh);
  EXPECT_TRUE(v.lower_bound);
}

TEST(StallModel, WithPsiReclaimInefficiencyIsACauseAtMostMediumWhileTasksWait) {
  analysis::StallModel waiting;
  const auto v = run(waiting, inefficient_reclaim(0.06)).back();  // some 6 %: low by time lost
  ASSERT_NE(reason(v, stall_reason::kReclaimInefficient), nullptr);
  EXPECT_EQ(v.level, VerdictLevel::kMedium);
  EXPECT_FALSE(v.lower_bound);
  analysis::StallModel calm;
  const auto c = run(calm, inefficient_reclaim(0.01)).back();  // nobody waits: kswapd churning
  EXPECT_EQ(reason(c, stall_reason::kReclaimInefficient), nullptr);
  EXPECT_EQ(c.level, VerdictLevel::kNone);
}

TEST(StallModel, ReclaimInefficiencyNeedsBothCountersAndATrickleIsNothing) {
  EXPECT_FALSE(analysis::reclaim_inefficiency(std::nullopt, 10.0, 256));
  EXPECT_FALSE(analysis::reclaim_inefficiency(1000.0, std::nullopt, 256));
  EXPECT_EQ(*analysis::reclaim_inefficiency(100.0, 0.0, 256), 0.0);  // below the scan floor
  EXPECT_NEAR(*analysis::reclaim_inefficiency(1000.0, 250.0, 256), 0.75, 1e-12);
  EXPECT_EQ(*analysis::reclaim_inefficiency(1000.0, 2000.0, 256), 0.0);  // steal counts may run ahead
}

// The canary touches 1000 fresh pages every 10 s. While the node is calm its faults take 2 us
// (the baseline, learned here, from the cycles at t=5, 15, 25); the cycle at t=45 takes 30 us
// a fault: 15x, slow_faults at medium, for as long as that cycle is the newest (30 s at most).
TEST(StallModel, CanaryFaultsMuchSlowerThanTheirCalmBaselineAreSlowFaults) {
  analysis::StallModel model;
  std::vector<Sample> samples = psi_run(90, 0, 0);
  std::uint64_t count = 0, sum = 0;
  for (int t = 0; t <= 90; ++t) {
    if (t % 10 == 5 && t <= 45) {
      count += 1000;
      sum += 1000 * (t == 45 ? 30000 : 2000);
    }
    samples[static_cast<std::size_t>(t)].canary_faults = std::make_pair(count, sum);
  }
  const auto verdicts = run(model, samples);
  // Three calm cycles make the baseline; the fourth (t=35) is compared with it: 1x.
  EXPECT_FALSE(verdicts[25].figures.fault_latency_ratio);
  ASSERT_TRUE(verdicts[35].figures.fault_latency_ratio);
  EXPECT_NEAR(*verdicts[35].figures.fault_latency_ratio, 1.0, 1e-9);
  EXPECT_EQ(reason(verdicts[35], stall_reason::kSlowFaults), nullptr);
  const StallVerdict& slow = verdicts[45];
  ASSERT_NE(reason(slow, stall_reason::kSlowFaults), nullptr);
  EXPECT_NEAR(reason(slow, stall_reason::kSlowFaults)->value, 15.0, 1e-9);
  EXPECT_EQ(reason(slow, stall_reason::kSlowFaults)->level, VerdictLevel::kMedium);
  EXPECT_EQ(slow.level, VerdictLevel::kMedium);
  EXPECT_EQ(std::count(slow.signals.begin(), slow.signals.end(), stall_signal::kCanary), 1);
  EXPECT_TRUE(verdicts[75].figures.fault_latency_ratio);   // 30 s after the cycle: still the newest
  EXPECT_FALSE(verdicts[76].figures.fault_latency_ratio);  // then it says nothing about now
  EXPECT_EQ(verdicts[90].level, VerdictLevel::kNone);
}

// Cycles that ran while tasks stalled do not join the baseline, and a restarted canary child
// (its counts start again) is not read as a cycle.
TEST(FaultBaseline, OnlyCalmCyclesMakeTheBaselineAndARestartIsNoCycle) {
  analysis::FaultBaseline b;
  const auto t0 = kStart;
  CanaryReading r;
  auto cycle = [&](std::uint64_t mean_ns, bool calm, int at) {
    r.page_fault.count += 100;
    r.page_fault.sum_ns += 100 * mean_ns;
    return b.update(r, t0 + std::chrono::seconds(at), calm);
  };
  b.update(r, t0, true);
  cycle(1000, true, 10);
  cycle(50000, false, 20);  // a stalled cycle: not in the baseline
  cycle(1000, true, 30);
  EXPECT_FALSE(b.baseline_ns());
  cycle(1000, true, 40);
  ASSERT_TRUE(b.baseline_ns());
  EXPECT_NEAR(*b.baseline_ns(), 1000, 1e-6);
  CanaryReading restarted;  // a new child: counts from zero
  restarted.page_fault.count = 100;
  restarted.page_fault.sum_ns = 100 * 90000;
  // Read as a cycle, the new child's 90 us would be 90x; it is where the new counts start.
  EXPECT_FALSE(b.update(restarted, t0 + std::chrono::seconds(41), true));
  r = restarted;
  const auto ratio = cycle(4000, true, 50);
  ASSERT_TRUE(ratio);
  EXPECT_NEAR(*ratio, 4.0, 1e-9);
}

TEST(StallModel, AnOomKillInTheWindowIsHigh) {
  analysis::StallModel model;
  std::vector<Sample> samples = psi_run(3, 0.01, 0);
  for (std::size_t t = 0; t < samples.size(); ++t) samples[t].vmstat["oom_kill"] = t >= 3 ? 1 : 0;
  const auto v = run(model, samples).back();
  EXPECT_EQ(v.level, VerdictLevel::kHigh);
  EXPECT_DOUBLE_EQ(reason(v, stall_reason::kOomKill)->value, 1);
}

TEST(StallModel, ACounterGoingBackwardsIsNoRate) {
  analysis::StallModel model;
  auto samples = psi_run(3, 0.5, 0);
  samples[3].psi_some_us = 0;  // the source restarted from zero, say
  const auto v = run(model, samples).back();
  EXPECT_FALSE(v.figures.psi_some_ratio);
}

TEST(StallModel, OneSnapshotHasNoWindowAndNoLevel) {
  analysis::StallModel model;
  const auto v = run(model, psi_run(0, 0, 0)).back();
  EXPECT_DOUBLE_EQ(v.figures.window_seconds, 0);
  EXPECT_EQ(v.level, VerdictLevel::kNone);
}

}  // namespace
}  // namespace memdiag
