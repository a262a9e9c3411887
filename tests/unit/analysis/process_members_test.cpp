// SPDX-License-Identifier: Apache-2.0
// Processes as members of a pressured scope (probes/analysis/process_members.hpp) and the
// unbacked promise's weight in a member's contribution (pressure_roles.hpp): who in a stalling
// cgroup presses, judged against the whole scope, from the process source's selection.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "probes/analysis/diagnosis_model.hpp"
#include "probes/analysis/growth_ema.hpp"
#include "probes/analysis/pressure_roles.hpp"
#include "probes/analysis/process_members.hpp"
#include "probes/analysis/verdict_evidence.hpp"
#include "tests/support/memcg_stall_scenario.hpp"

namespace memdiag {
namespace {

using namespace std::chrono_literals;
using test::at;
using test::kMiB;
using test::Scenario;

SelectedProcess process(int pid, std::string comm, std::string cgroup, std::uint64_t anon_mib,
                        std::uint64_t unbacked_mib = 0) {
  SelectedProcess p;
  p.pid = pid;
  p.comm = std::move(comm);
  p.cgroup = std::move(cgroup);
  p.rss_anon_bytes = anon_mib * kMiB;
  p.rss_file_bytes = 50 * kMiB;  // file pages are not footprint
  p.unbacked_promise_bytes = unbacked_mib * kMiB;
  return p;
}

// /jobs's processes: a grower whose anon rises 40 MiB between 1 s scans, a reader that holds
// 20 MiB, a tiny helper; /other's big process is outside the scope.
ProcessSection scan_at(int t) {
  ProcessSection s;
  s.scanned_at = at(t);
  s.selected = {process(100, "python3", "/jobs/grower", 100 + 40 * static_cast<std::uint64_t>(t)),
                process(200, "cat", "/jobs/reader1", 20), process(300, "sh", "/jobs", 1),
                process(400, "java", "/other", 4000, 9000)};
  for (const auto& p : s.selected) s.unbacked_promise_bytes += p.unbacked_promise_bytes;
  return s;
}

TEST(ProcessMembers, TheGrowingProcessLeadsItsScopeOthersAndOutsidersDoNot) {
  analysis::ProcessGrowthTracker growth;
  const analysis::RoleSettings roles;
  for (int t = 0; t <= 10; ++t) {
    const ProcessSection s = scan_at(t);
    growth.update(&s, roles.growth_half_life);
    growth.update(&s, roles.growth_half_life);  // a sample without a new scan changes nothing
  }
  const ProcessSection now = scan_at(10);
  // /jobs holds 600 MiB in all (its memory.stat), grows 40 MiB/s, is 100 MiB short.
  const analysis::ScopeTotals jobs{"/jobs", {600 * kMiB, 40.0 * kMiB, 0, 1024 * kMiB, 100 * kMiB, true}};
  const auto ranked = analysis::rank_processes(now, jobs, VerdictLevel::kHigh, growth, roles);
  ASSERT_EQ(ranked.size(), 1u) << "the grower's relief covers the shortfall; sh is tiny; java is outside";
  const ScopeProcess& grower = ranked[0];
  EXPECT_EQ(grower.pid, 100);
  EXPECT_EQ(grower.comm, "python3");
  EXPECT_EQ(grower.cgroup, "/jobs/grower");
  EXPECT_EQ(grower.footprint_bytes, 500 * kMiB);
  EXPECT_EQ(grower.relief_bytes, 500 * kMiB);
  ASSERT_TRUE(grower.growth_bytes_per_second);
  // The EMA of a steady 40 MiB/s from the second scan on: 40 MiB/s x (1 - 2^(-10 s / 10 s)).
  EXPECT_NEAR(*grower.growth_bytes_per_second / kMiB, 40 * (1 - std::exp2(-10.0 / 10)), 1e-6);
  // Shares of the whole scope: held 500/600; grown against the scope's 40 MiB/s.
  EXPECT_NEAR(grower.contribution_ratio, (500.0 / 600 + *grower.growth_bytes_per_second / (40.0 * kMiB)) / 2, 1e-9);

  // The node scope sees java too: it holds half the node's footprint and all its promises
  // (0.4 x 0.5 + 0.2 x 1 = 0.4), ahead of the grower (0.4 x 500/8000 + 0.4 x 0.5 = 0.225); the
  // node is 4500 MiB short, which java's 4000 MiB do not cover alone.
  const analysis::ScopeTotals node{"", {8000 * kMiB, 40.0 * kMiB, now.unbacked_promise_bytes, 16384 * kMiB,
                                        4500 * kMiB, true}};
  const auto on_node = analysis::rank_processes(now, node, VerdictLevel::kMedium, growth, roles);
  ASSERT_EQ(on_node.size(), 2u);
  EXPECT_EQ(on_node[0].pid, 400);
  EXPECT_NEAR(on_node[0].contribution_ratio, 0.4, 1e-9);
  EXPECT_EQ(on_node[0].unbacked_promise_bytes, 9000 * kMiB);
  EXPECT_FALSE(on_node[0].growth_bytes_per_second && *on_node[0].growth_bytes_per_second != 0);
  EXPECT_EQ(on_node[1].pid, 100);
  EXPECT_NEAR(on_node[1].contribution_ratio, 0.4 * 500 / 8000 + 0.4 * 0.5, 1e-9);
  EXPECT_TRUE(analysis::rank_processes(now, jobs, VerdictLevel::kNone, growth, roles).empty());
  analysis::ScopeTotals calm = jobs;
  calm.whole.short_of_memory = false;
  EXPECT_TRUE(analysis::rank_processes(now, calm, VerdictLevel::kHigh, growth, roles).empty())
      << "a scope not short of memory names no contributor";
  analysis::RoleSettings one = roles;
  one.max_members = 1;
  EXPECT_EQ(analysis::rank_processes(now, node, VerdictLevel::kMedium, growth, one).size(), 1u);
}

TEST(ProcessMembers, GrowthNeedsTwoScansOfTheSameProcess) {
  analysis::ProcessGrowthTracker growth;
  ProcessSection first = scan_at(0);
  growth.update(&first, 10s);
  EXPECT_FALSE(growth.growth(first.selected[0]));
  ProcessSection second = scan_at(1);
  growth.update(&second, 10s);
  ASSERT_TRUE(growth.growth(second.selected[0]));
  EXPECT_GT(*growth.growth(second.selected[0]), 0);
  // The pid reused by another program starts again.
  ProcessSection reused = scan_at(2);
  reused.selected[0].comm = "postgres";
  growth.update(&reused, 10s);
  EXPECT_FALSE(growth.growth(reused.selected[0]));
  // Without a process section, nothing is remembered.
  growth.update(static_cast<const ProcessSection*>(nullptr), 10s);
  ProcessSection again = scan_at(3);
  growth.update(&again, 10s);
  EXPECT_FALSE(growth.growth(again.selected[0]));
}

// Two members hold and grow alike; one also holds most of the scope's unbacked promises. The
// promise orders them (0.2 of the weight); the promiser, holding nothing, relieves nothing.
TEST(PressureRoles, UnbackedPromisesOrderContributorsButMakeNone) {
  analysis::MemberFigures a, b, promiser;
  a.cgroup = "/jobs/a";
  a.footprint_bytes = 400 * kMiB;
  a.relief_bytes = 400 * kMiB;
  a.growth_bytes_per_second = 10.0 * kMiB;
  a.unbacked_promise_bytes = 0;
  b = a;
  b.cgroup = "/jobs/b";
  b.unbacked_promise_bytes = 3000 * kMiB;
  promiser.cgroup = "/jobs/promiser";
  promiser.footprint_bytes = 0;
  promiser.unbacked_promise_bytes = 1000 * kMiB;
  analysis::ScopeWhole whole;
  whole.short_of_memory = true;
  whole.shortfall_bytes = 600 * kMiB;  // both are needed to cover it
  const auto ranked = analysis::rank_members({a, b, promiser}, VerdictLevel::kHigh, whole, {}, {}).members;
  ASSERT_EQ(ranked.size(), 2u);
  EXPECT_EQ(ranked[0].cgroup, "/jobs/b");
  EXPECT_NEAR(ranked[0].contribution_ratio, 0.4 * 0.5 + 0.4 * 0.5 + 0.2 * 0.75, 1e-9);
  EXPECT_EQ(ranked[1].cgroup, "/jobs/a");
  EXPECT_NEAR(ranked[1].contribution_ratio, 0.4 * 0.5 + 0.4 * 0.5, 1e-9);
  // Without promises anywhere, or with the weight at 0, held and growth share alike.
  analysis::RoleSettings no_promise;
  no_promise.promise_weight = 0;
  const auto flat = analysis::rank_members({a, b, promiser}, VerdictLevel::kHigh, whole, no_promise, {}).members;
  ASSERT_EQ(flat.size(), 2u);
  EXPECT_NEAR(flat[0].contribution_ratio, 0.5, 1e-9);
  EXPECT_NEAR(flat[1].contribution_ratio, 0.5, 1e-9);
}

// With no growth anywhere, the promise keeps its 20 % and holding takes the other 80 %.
TEST(PressureRoles, ThePromiseWeighsTheSameWithoutGrowth) {
  analysis::MemberFigures a, b;
  a.cgroup = "/a";
  a.footprint_bytes = 500 * kMiB;
  a.relief_bytes = 500 * kMiB;
  a.unbacked_promise_bytes = 0;
  b = a;
  b.cgroup = "/b";
  b.unbacked_promise_bytes = 1000 * kMiB;
  analysis::ScopeWhole whole;
  whole.short_of_memory = true;
  whole.shortfall_bytes = 800 * kMiB;  // both are needed to cover it
  const auto ranked = analysis::rank_members({a, b}, VerdictLevel::kHigh, whole, {}, {}).members;
  ASSERT_EQ(ranked.size(), 2u);
  EXPECT_EQ(ranked[0].cgroup, "/b");
  EXPECT_NEAR(ranked[0].contribution_ratio, 0.8 * 0.5 + 0.2 * 1, 1e-9);
  EXPECT_NEAR(ranked[1].contribution_ratio, 0.8 * 0.5, 1e-9);
}

// The wall clock stepping back (NTP, a resumed VM) starts the growth afresh instead of freezing
// it and then reading all the time between as one sample's growth.
TEST(GrowthEma, AClockSteppingBackStartsAfresh) {
  analysis::GrowthEma ema;
  EXPECT_EQ(ema.update(at(0), 100 * kMiB, 10s), 0);
  EXPECT_GT(ema.update(at(1), 110 * kMiB, 10s), 0);
  EXPECT_EQ(ema.update(at(1), 500 * kMiB, 10s), ema.bytes_per_second()) << "the same time again changes nothing";
  EXPECT_EQ(ema.update(at(-100), 120 * kMiB, 10s), 0) << "back 101 s: afresh";
  // One second later: growth from the new start (1 MiB in 1 s), not from the old reading.
  EXPECT_NEAR(ema.update(at(-99), 121 * kMiB, 10s), 1.0 * kMiB * (1 - std::exp2(-0.1)), 1);
}

// The memcg stall scenario with a process scan: /jobs names the grower's process, with its
// relief, beside the grower's cgroup; the node, calm, names none.
TEST(DiagnosisModel, AStallingScopeNamesItsTopProcess) {
  analysis::DiagnosisModel model;
  std::vector<SnapshotPtr> ring;
  std::shared_ptr<Snapshot> last;
  for (int t = 0; t <= 20; ++t) {
    auto s = Scenario::at_second(t);
    ProcessSection p;
    p.scanned_at = at(t - t % 2);  // a scan every 2 s
    const int since = std::max(0, (t - t % 2) - 10);
    p.selected = {process(100, "python3", "/jobs/grower", 100 + 40 * static_cast<std::uint64_t>(since)),
                  process(200, "cat", "/jobs/reader1", 20)};
    s->processes = p;
    model.assess(*s, ring);
    ring.push_back(s);
    last = s;
  }
  const CgroupScope& jobs = last->derived.cgroup_scopes.at(0);
  ASSERT_NE(jobs.stall.level, VerdictLevel::kNone);
  ASSERT_FALSE(jobs.analysis.processes.empty());
  EXPECT_EQ(jobs.analysis.processes[0].pid, 100);
  EXPECT_EQ(jobs.analysis.processes[0].relief_bytes, 500 * kMiB);
  ASSERT_TRUE(jobs.analysis.processes[0].growth_bytes_per_second);
  EXPECT_GT(*jobs.analysis.processes[0].growth_bytes_per_second, 10.0 * kMiB);
  EXPECT_TRUE(last->derived.node_scope->processes.empty());
  // The log line of a transition names it too.
  const std::string evidence = analysis::describe_evidence(jobs.stall, &jobs.analysis);
  EXPECT_NE(evidence.find(" top_process=100:python3:relief=500MiB"), std::string::npos) << evidence;
}

}  // namespace
}  // namespace memdiag
