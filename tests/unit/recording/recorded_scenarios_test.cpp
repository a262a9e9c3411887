// SPDX-License-Identifier: Apache-2.0
// The models on recordings: each scenario goes through a recording file and back
// (probes/recording), then through the diagnosis as `memdiagd diagnose --replay` runs it
// (analysis::DiagnosisReplay), and the test asserts the level, the reasons, the contributors,
// the victims and the relief.
//
// Hand-written recordings for what this machine cannot produce: a node-wide reclaim storm with
// thrashing (it would drown a shared 24 GiB machine), overcommit mode 1 with unbacked promises
// past the supply and mode 2 near CommitLimit (global sysctls), and a memcg stall on cgroup v2
// (this machine has v1 memory). Recordings made on this machine from real scenarios are in
// tests/fixtures/recordings/ (how they were made: record-scenarios.py there).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "exporters/report/diagnosis_report.hpp"
#include "exporters/report/report_selection.hpp"
#include "probes/analysis/diagnosis_replay.hpp"
#include "probes/recording/recording_reader.hpp"
#include "probes/recording/recording_writer.hpp"
#include "tests/support/memcg_stall_scenario.hpp"

namespace memdiag {
namespace {

using namespace std::chrono_literals;
using test::at;
using test::kMiB;
constexpr std::uint64_t kGiB = 1ull << 30;

// The assessed snapshots of a replay, by second since the first.
struct Replayed {
  std::map<int, SnapshotPtr> at;
  std::vector<VerdictTransition> transitions;
  recording::RecordingHeader header;

  const Snapshot& second(int t) const { return *at.at(t); }
  const Snapshot& last() const { return *at.rbegin()->second; }
};

Replayed replay_bytes(std::string bytes) {
  Replayed out;
  auto reader = recording::RecordingReader::open(std::move(bytes));
  EXPECT_TRUE(reader.ok()) << reader.error().message;
  if (!reader) return out;
  out.header = reader->header();
  analysis::DiagnosisReplay models({}, 300);
  std::optional<std::chrono::system_clock::time_point> first;
  for (;;) {
    auto next = reader->next();
    EXPECT_TRUE(next.ok()) << next.error().message;
    if (!next || !*next) break;
    std::shared_ptr<Snapshot> s = std::move(**next);
    if (!first) first = s->taken_at;
    for (auto& t : models.add(s)) out.transitions.push_back(std::move(t));
    out.at[static_cast<int>(std::chrono::duration_cast<std::chrono::seconds>(s->taken_at - *first).count())] =
        models.latest();
  }
  return out;
}

// Written to a recording, read back and replayed.
Replayed replay(const std::vector<std::shared_ptr<Snapshot>>& snapshots) {
  std::vector<const Snapshot*> raw;
  for (const auto& s : snapshots) raw.push_back(s.get());
  const recording::RecordingHeader header{"hand-written", "test-node", "Linux 6.1", 1000ms, at(0)};
  return replay_bytes(recording::encode_recording(header, raw));
}

std::vector<std::string_view> codes(const std::vector<VerdictReason>& reasons) {
  std::vector<std::string_view> out;
  for (const auto& r : reasons) out.push_back(r.code);
  return out;
}

bool has(const std::vector<std::string_view>& v, std::string_view x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

const ScopeMember* member(const ScopeAnalysis& scope, std::string_view cgroup) {
  for (const auto& m : scope.members) {
    if (m.cgroup == cgroup) return &m;
  }
  return nullptr;
}

FieldTable table(std::shared_ptr<const FieldSchema>& schema, const std::vector<std::pair<std::string, std::uint64_t>>& rows,
                 FieldKind kind) {
  if (!schema) {
    auto fresh = std::make_shared<FieldSchema>();
    for (const auto& [name, value] : rows) {
      fresh->names.push_back(name);
      fresh->kinds.push_back(kind);
    }
    schema = fresh;
  }
  FieldTable t{schema, {}};
  for (const auto& row : rows) t.values.push_back(row.second);
  return t;
}

CgroupSample leaf(std::string path, std::uint64_t anon, std::uint64_t file, double psi_some_seconds,
                  std::uint64_t refaults) {
  CgroupSample c;
  c.path = std::move(path);
  c.usage_bytes = anon + file;
  c.stat = {{"anon", anon, false},
            {"file", file, false},
            {"inactive_file", file / 2, false},
            {"shmem", 0, false},
            {"workingset_refault_file", refaults, true}};
  c.pressure = PsiResource{};
  c.pressure->some.total_us = static_cast<std::uint64_t>(psi_some_seconds * 1e6);
  c.pressure->full = PsiLine{};
  return c;
}

// A node-wide reclaim storm with thrashing, one sample a second for 60 s: a 64 GiB node, no
// swap, three jobs. From t=10 to t=30 /jobs/trainer grows its anonymous memory 200 MiB/s; the
// node runs out, tasks reclaim directly (eBPF 0.5 s/s, allocstalls, pgscan_direct) and wait
// (PSI some 70 %, full 35 %), and /jobs/etl's page cache is evicted and read back (refaults
// 40k pages/s over a 200k-page file cache: twice the cache in the 10 s window). Then it stops.
std::vector<std::shared_ptr<Snapshot>> node_reclaim_storm() {
  std::shared_ptr<const FieldSchema> vmstat_schema, meminfo_schema;
  std::vector<std::shared_ptr<Snapshot>> out;
  for (int t = 0; t <= 60; ++t) {
    const double storm = std::clamp(t - 10.0, 0.0, 20.0);  // seconds of storm so far
    auto s = std::make_shared<Snapshot>();
    s->sequence = static_cast<std::uint64_t>(t + 1);
    s->taken_at = at(t);
    const std::uint64_t trainer_anon = 40 * kGiB + static_cast<std::uint64_t>(storm * 200) * kMiB;
    SystemMemory m;
    m.physical_total_bytes = 64 * kGiB;
    m.physical_available_bytes = 64 * kGiB - trainer_anon - 12 * kGiB;
    m.commit_charge_bytes = 70 * kGiB;
    m.commit_limit_bytes = 32 * kGiB;
    m.commit_backed_bytes = trainer_anon + 10 * kGiB;
    s->system_memory = m;
    s->overcommit_policy = OvercommitPolicy{OvercommitMode::kHeuristic, 50, std::nullopt};
    PressureSection psi;
    psi.resources[static_cast<std::size_t>(PsiResourceKind::kMemory)] =
        PsiResource{PsiLine{0, 0, 0, static_cast<std::uint64_t>(storm * 0.70e6)},
                    PsiLine{0, 0, 0, static_cast<std::uint64_t>(storm * 0.35e6)}};
    s->pressure = psi;
    s->vmstat = table(vmstat_schema,
                      {{"nr_active_file", 100000},
                       {"nr_inactive_file", 100000},
                       {"allocstall_normal", static_cast<std::uint64_t>(storm * 3000)},
                       {"allocstall_movable", static_cast<std::uint64_t>(storm * 1000)},
                       {"pgscan_direct", static_cast<std::uint64_t>(storm * 500000)},
                       {"pgsteal_direct", static_cast<std::uint64_t>(storm * 200000)},
                       {"compact_stall", 0},
                       {"workingset_refault_file", static_cast<std::uint64_t>(storm * 40000)},
                       {"oom_kill", 0}},
                      FieldKind::kCounter);
    s->meminfo = table(meminfo_schema, {{"MemTotal", m.physical_total_bytes}, {"MemAvailable", m.physical_available_bytes}},
                       FieldKind::kBytes);
    ReclaimStallSection ebpf;
    ebpf.attach_mode = "tp_btf";
    ebpf.node[static_cast<std::size_t>(StallKind::kDirect)].sum_ns = static_cast<std::uint64_t>(storm * 0.5e9);
    ebpf.node[static_cast<std::size_t>(StallKind::kDirect)].count = static_cast<std::uint64_t>(storm * 4000);
    s->reclaim_stall = ebpf;

    CgroupSection cg;
    cg.mode = "v2";
    CgroupSample jobs = leaf("/jobs", 0, 0, storm * 0.7, 0);
    jobs.leaf = false;
    cg.cgroups = {jobs,
                  leaf("/jobs/trainer", trainer_anon, 1 * kGiB, storm * 0.05, 0),
                  leaf("/jobs/etl", 2 * kGiB, 800 * kMiB, storm * 0.6, static_cast<std::uint64_t>(storm * 40000)),
                  leaf("/system.slice/sshd.service", 20 * kMiB, 10 * kMiB, 0, 0)};
    s->cgroups = cg;
    out.push_back(s);
  }
  return out;
}

TEST(RecordedScenario, NodeWideReclaimStormWithThrashing) {
  const Replayed r = replay(node_reclaim_storm());
  const Snapshot& quiet = r.second(5);
  EXPECT_EQ(quiet.derived.stall->level, VerdictLevel::kNone);
  EXPECT_TRUE(quiet.derived.node_scope->members.empty());

  // Mid-storm: critical on PSI some 70 %, caused by direct reclaim, with thrashing.
  const Snapshot& storm = r.second(25);
  const StallVerdict& node = *storm.derived.stall;
  EXPECT_EQ(node.level, VerdictLevel::kCritical);
  const auto reasons = codes(node.reasons);
  EXPECT_EQ(reasons.front(), stall_reason::kStallTime);
  EXPECT_TRUE(has(reasons, stall_reason::kDirectReclaim));
  EXPECT_TRUE(has(reasons, stall_reason::kThrashing));
  EXPECT_NEAR(*node.figures.psi_some_ratio, 0.70, 1e-6);
  EXPECT_NEAR(*node.figures.direct_reclaim_stall_ratio, 0.5, 1e-6);
  EXPECT_NEAR(*node.figures.refault_ratio, 2.0, 1e-6);

  // The trainer holds and grows: the contributor, first. The ETL job stalls and refaults
  // without growing: the victim. sshd holds next to nothing: neither.
  const ScopeAnalysis& scope = *storm.derived.node_scope;
  ASSERT_FALSE(scope.members.empty());
  EXPECT_EQ(scope.members[0].cgroup, "/jobs/trainer");
  EXPECT_EQ(scope.members[0].role, PressureRole::kContributor);
  EXPECT_GT(scope.members[0].contribution_ratio, 0.8);
  const ScopeMember* etl = member(scope, "/jobs/etl");
  ASSERT_NE(etl, nullptr);
  EXPECT_EQ(etl->role, PressureRole::kVictim);
  EXPECT_EQ(member(scope, "/system.slice/sshd.service"), nullptr);
  // Relief: the trainer's anonymous memory (43 GiB at t=25) against the shortfall to 10 % of
  // the node (available 64 - 43 - 12 = 9 GiB, above 6.4: none yet).
  EXPECT_EQ(scope.members[0].relief_bytes, 40 * kGiB + 3000 * kMiB);
  EXPECT_EQ(*scope.shortfall_bytes, 0u);

  // Rises at once (low at t=11 with one second of storm in its 2 s window: a burst so far;
  // medium at t=12 by its share of the long window; critical at t=13, three seconds of it),
  // logged with the trainer named; back to none within 30 s of the end (t=30).
  std::vector<std::pair<int, VerdictLevel>> node_changes;
  for (const auto& t : r.transitions) {
    if (t.scope == "node") node_changes.emplace_back(static_cast<int>((t.at - at(0)) / 1s), t.to);
  }
  ASSERT_FALSE(node_changes.empty());
  ASSERT_GE(node_changes.size(), 2u);
  EXPECT_EQ(node_changes[0], std::make_pair(11, VerdictLevel::kLow));
  EXPECT_EQ(node_changes[1], std::make_pair(12, VerdictLevel::kMedium));
  ASSERT_GE(node_changes.size(), 3u);
  EXPECT_EQ(node_changes[2], std::make_pair(13, VerdictLevel::kCritical));
  EXPECT_EQ(node_changes.back().second, VerdictLevel::kNone);
  EXPECT_LE(node_changes.back().first, 60);
  EXPECT_EQ(r.last().derived.stall->level, VerdictLevel::kNone);
  for (const auto& t : r.transitions) {
    if (t.scope == "node" && t.to == VerdictLevel::kCritical) {
      EXPECT_NE(t.evidence.find("contributors=/jobs/trainer"), std::string::npos) << t.evidence;
    }
  }
}

// The seed's training node (002), overcommit mode 1: a 64 GiB node without swap, 4 GiB
// available, 100 GiB committed of which 56 GiB is resident at first; six jobs each promised ~7
// GiB more than they hold. Over the minute the promises come due at 100 MiB/s (the backed part
// grows, the kernel keeps 4 GiB available by dropping cache).
std::vector<std::shared_ptr<Snapshot>> mode_always_past_supply() {
  std::vector<std::shared_ptr<Snapshot>> out;
  for (int t = 0; t <= 60; ++t) {
    auto s = std::make_shared<Snapshot>();
    s->sequence = static_cast<std::uint64_t>(t + 1);
    s->taken_at = at(t);
    SystemMemory m;
    m.physical_total_bytes = 64 * kGiB;
    m.physical_available_bytes = 4 * kGiB;
    m.commit_charge_bytes = 100 * kGiB;
    m.commit_limit_bytes = 32 * kGiB;
    m.commit_backed_bytes = 56 * kGiB + static_cast<std::uint64_t>(t) * 100 * kMiB;
    s->system_memory = m;
    s->overcommit_policy = OvercommitPolicy{OvercommitMode::kAlways, 50, std::nullopt};
    ProcessSection p;
    p.mode = "bpf_iter";
    p.processes = 6;
    for (int job = 1; job <= 6; ++job) {
      const std::string cgroup = "/kubepods.slice/job" + std::to_string(job);
      const std::uint64_t unbacked = (6 + static_cast<std::uint64_t>(job) / 3) * kGiB + static_cast<std::uint64_t>(job) * kMiB;
      p.selected.push_back(SelectedProcess{1000 + job, "python3", cgroup, 900, 0.01, 9 * kGiB, 0, 0, 0, 80 * kGiB,
                                           9 * kGiB + unbacked, unbacked, kTopUnbacked});
      p.cgroups.push_back(CgroupProcessTotals{cgroup, 1, 900, 9 * kGiB, 0, 0, 0, 9 * kGiB + unbacked, unbacked});
      p.unbacked_promise_bytes += unbacked;
    }
    s->processes = p;
    out.push_back(s);
  }
  return out;
}

TEST(RecordedScenario, ModeAlwaysWithUnbackedPromisesPastTheSupply) {
  const Replayed r = replay(mode_always_past_supply());
  const OvercommitVerdict& first = *r.second(0).derived.overcommit;
  EXPECT_EQ(*first.unbacked_bytes, 44 * kGiB);
  EXPECT_DOUBLE_EQ(*first.unbacked_to_supply_ratio, 11.0);
  // Ten seconds in, too little of the window for a forecast.
  EXPECT_FALSE(r.second(10).derived.overcommit->promise_exhaustion_seconds);
  const OvercommitVerdict& o = *r.last().derived.overcommit;
  EXPECT_EQ(o.mode, OvercommitMode::kAlways);
  EXPECT_EQ(o.level, VerdictLevel::kCritical);
  EXPECT_EQ(*o.unbacked_bytes, 44 * kGiB - 6000 * kMiB);
  EXPECT_EQ(o.supply_bytes, 4 * kGiB);
  // Promises paid at 100 MiB/s (the backed memory rising) use up the 4 GiB supply in 41 s.
  ASSERT_TRUE(o.payment_bytes_per_second);
  EXPECT_NEAR(*o.payment_bytes_per_second, 100.0 * kMiB, 1.0);
  ASSERT_TRUE(o.promise_exhaustion_seconds);
  EXPECT_NEAR(*o.promise_exhaustion_seconds, 4096.0 / 100, 0.01);
  EXPECT_EQ(codes(o.reasons), (std::vector<std::string_view>{overcommit_reason::kUnbackedPromises,
                                                             overcommit_reason::kOvercommitAlways}));
  // The holders, largest first: job6 and job5 (8 GiB and some), then job4, job3 (7 GiB).
  const auto holders = report::top_promise_cgroups(*r.last().processes);
  ASSERT_EQ(holders.size(), report::kTopPromiseHolders);
  EXPECT_EQ(holders[0]->cgroup, "/kubepods.slice/job6");
  EXPECT_EQ(holders[0]->unbacked_promise_bytes, 8 * kGiB + 6 * kMiB);
  EXPECT_EQ(holders[1]->cgroup, "/kubepods.slice/job5");
  EXPECT_EQ(holders[2]->cgroup, "/kubepods.slice/job4");
  // The report says what mode 1 means, and what to do.
  const std::string text = report::render_diagnosis_text(r.last(), {.since = std::nullopt, .origin = "replay"});
  EXPECT_NE(text.find("OVERCOMMIT RISK: CRITICAL (mode always)"), std::string::npos) << text;
  EXPECT_NE(text.find("/kubepods.slice/job6"), std::string::npos) << text;
  EXPECT_NE(text.find("vm.overcommit_memory"), std::string::npos) << text;
  EXPECT_NE(text.find("promises being paid at 100MiB/s use up the supply in ~41 s"), std::string::npos) << text;
}

// The same node, but the promises are cancelled instead of paid: forked children exit, regions
// are unmapped, at 100 MiB/s, and the backed memory stays where it is. The unbacked figure falls
// as fast as it did above, yet nothing is drawn from the supply: no exhaustion.
TEST(RecordedScenario, CancelledPromisesAreNoPayment) {
  std::vector<std::shared_ptr<Snapshot>> snapshots = mode_always_past_supply();
  for (int t = 0; t <= 60; ++t) {
    SystemMemory& m = *snapshots[static_cast<std::size_t>(t)]->system_memory;
    m.commit_backed_bytes = 56 * kGiB;
    m.commit_charge_bytes = 100 * kGiB - static_cast<std::uint64_t>(t) * 100 * kMiB;
  }
  const Replayed r = replay(snapshots);
  const OvercommitVerdict& o = *r.last().derived.overcommit;
  EXPECT_EQ(*o.unbacked_bytes, 44 * kGiB - 6000 * kMiB);
  EXPECT_EQ(o.level, VerdictLevel::kCritical) << "still far more promised than the supply";
  EXPECT_FALSE(o.payment_bytes_per_second);
  EXPECT_FALSE(o.promise_exhaustion_seconds);
  const std::string text = report::render_diagnosis_text(r.last(), {.since = std::nullopt, .origin = "replay"});
  EXPECT_EQ(text.find("use up the supply"), std::string::npos) << text;
}

// Mode 2 near CommitLimit: 16 GiB RAM + 4 GiB swap, limit 12 GiB, 11.6 GiB committed and
// rising; memory itself is plentiful (nothing is stalling): the risk is allocations refused.
std::vector<std::shared_ptr<Snapshot>> mode_never_near_limit() {
  std::vector<std::shared_ptr<Snapshot>> out;
  for (int t = 0; t <= 5; ++t) {
    auto s = std::make_shared<Snapshot>();
    s->sequence = static_cast<std::uint64_t>(t + 1);
    s->taken_at = at(t);
    SystemMemory m;
    m.physical_total_bytes = 16 * kGiB;
    m.physical_available_bytes = 9 * kGiB;
    m.swap_total_bytes = 4 * kGiB;
    m.swap_free_bytes = 4 * kGiB;
    m.commit_limit_bytes = 12 * kGiB;
    m.commit_charge_bytes = 12 * kGiB - 400 * kMiB + static_cast<std::uint64_t>(t) * 20 * kMiB;
    m.commit_backed_bytes = 6 * kGiB;
    s->system_memory = m;
    s->overcommit_policy = OvercommitPolicy{OvercommitMode::kNever, 50, std::nullopt};
    out.push_back(s);
  }
  return out;
}

TEST(RecordedScenario, ModeNeverNearCommitLimit) {
  const Replayed r = replay(mode_never_near_limit());
  const OvercommitVerdict& o = *r.last().derived.overcommit;
  EXPECT_EQ(o.mode, OvercommitMode::kNever);
  EXPECT_GE(o.level, VerdictLevel::kHigh);
  ASSERT_FALSE(o.reasons.empty());
  EXPECT_EQ(o.reasons[0].code, overcommit_reason::kCommitLimit);
  EXPECT_NEAR(*o.commit_limit_ratio, (12 * 1024 - 300) / (12.0 * 1024), 1e-9);
  // The unbacked promise is not the risk in this mode: the limit refuses promises first.
  EXPECT_FALSE(has(codes(o.reasons), overcommit_reason::kUnbackedPromises));
  EXPECT_EQ(r.last().derived.stall->level, VerdictLevel::kNone);
  const std::string text = report::render_diagnosis_text(r.last(), {.since = std::nullopt, .origin = "replay"});
  EXPECT_NE(text.find("(mode never)"), std::string::npos) << text;
}

// A memcg-only stall on cgroup v2 (tests/support/memcg_stall_scenario.hpp), through a
// recording: the same verdicts as the model gives it directly (diagnosis_model_test).
TEST(RecordedScenario, MemcgOnlyPressureOnCgroupV2) {
  std::vector<std::shared_ptr<Snapshot>> snapshots;
  for (int t = 0; t <= 60; ++t) snapshots.push_back(test::Scenario::at_second(t));
  const Replayed r = replay(snapshots);
  const Snapshot& mid = r.second(20);
  EXPECT_EQ(mid.derived.stall->level, VerdictLevel::kNone);  // the node is calm
  ASSERT_EQ(mid.derived.cgroup_scopes.size(), 1u);
  const CgroupScope& jobs = mid.derived.cgroup_scopes[0];
  EXPECT_EQ(jobs.cgroup, "/jobs");
  EXPECT_EQ(jobs.stall.level, VerdictLevel::kHigh);
  EXPECT_TRUE(has(codes(jobs.stall.reasons), stall_reason::kMemcgLimit));
  ASSERT_GE(jobs.analysis.members.size(), 3u);
  EXPECT_EQ(jobs.analysis.members[0].cgroup, "/jobs/grower");
  EXPECT_EQ(jobs.analysis.members[0].role, PressureRole::kContributor);
  EXPECT_EQ(jobs.analysis.members[0].relief_bytes, 500 * kMiB);
  EXPECT_EQ(member(jobs.analysis, "/jobs/reader1")->role, PressureRole::kVictim);
  EXPECT_EQ(member(jobs.analysis, "/jobs/reader2")->role, PressureRole::kVictim);
  EXPECT_EQ(r.second(50).derived.cgroup_scopes[0].stall.level, VerdictLevel::kNone);
}

// --- Recordings made on this machine (tests/fixtures/recordings/record-scenarios.py) ---------

Replayed replay_fixture(const std::string& name) {
  const std::string path = std::string(MEMDIAG_SOURCE_DIR) + "/tests/fixtures/recordings/" + name + ".mdrec";
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream bytes;
  bytes << in.rdbuf();
  return replay_bytes(bytes.str());
}

const CgroupSample* cgroup(const Snapshot& s, std::string_view path) {
  if (!s.cgroups) return nullptr;
  for (const auto& c : s.cgroups->cgroups) {
    if (c.path == path) return &c;
  }
  return nullptr;
}

const CgroupScope* scope(const Snapshot& s, std::string_view path) {
  for (const auto& c : s.derived.cgroup_scopes) {
    if (c.cgroup == path) return &c;
  }
  return nullptr;
}

std::uint64_t stat_of(const CgroupSample& c, std::string_view key) {
  for (const auto& v : c.stat) {
    if (v.key == key) return v.value;
  }
  return 0;
}

// The recordings here were made in format version 1 (before the Windows section): they must
// keep replaying, and their version byte says they are exercising that.
TEST(RecordedOnThisMachine, FormatVersion1RecordingsStillReplay) {
  const std::string path = std::string(MEMDIAG_SOURCE_DIR) + "/tests/fixtures/recordings/quiet.mdrec";
  std::ifstream in(path, std::ios::binary);
  std::string head(recording::kMagic.size() + 1, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  EXPECT_EQ(head.back(), '\x01');
  EXPECT_GT(recording::kFormatVersion, 1u);
}

// 15 s of this machine with nothing added: nothing to say.
TEST(RecordedOnThisMachine, AQuietNodeSaysNothing) {
  const Replayed r = replay_fixture("quiet");
  ASSERT_GE(r.at.size(), 14u);
  EXPECT_TRUE(r.transitions.empty());
  for (const auto& [t, s] : r.at) {
    EXPECT_EQ(s->derived.stall->level, VerdictLevel::kNone) << "t=" << t;
    EXPECT_TRUE(s->derived.stall->reasons.empty()) << "t=" << t;
    EXPECT_TRUE(s->derived.node_scope->members.empty()) << "t=" << t;
    for (const auto& c : s->derived.cgroup_scopes) EXPECT_EQ(c.stall.level, VerdictLevel::kNone) << c.cgroup;
  }
  const OvercommitVerdict& o = *r.last().derived.overcommit;
  EXPECT_EQ(o.mode, OvercommitMode::kHeuristic);
  EXPECT_EQ(o.level, VerdictLevel::kNone);
  EXPECT_GT(o.supply_bytes, 8 * kGiB);
  EXPECT_FALSE(r.header.host.empty());
  EXPECT_EQ(r.header.interval, 1000ms);
}

// A job reading a 2 GiB file over and over in a cgroup limited to 512 MiB: reclaim at the limit
// all the time and every page read back is a refault, but the job waits ~1 % of the time. Not
// thrashing: at most low, for the cgroup and the node alike.
TEST(RecordedOnThisMachine, PageCacheStreamingStaysNoneOrLow) {
  const Replayed r = replay_fixture("page-cache-streaming");
  const std::string stream = "/memdiag-rec-stream";
  double most_refaults = 0;
  for (const auto& [t, s] : r.at) {
    EXPECT_LE(s->derived.stall->level, VerdictLevel::kLow) << "t=" << t;
    EXPECT_FALSE(has(codes(s->derived.stall->reasons), stall_reason::kThrashing)) << "t=" << t;
    const CgroupScope* c = scope(*s, stream);
    ASSERT_NE(c, nullptr) << "t=" << t << ": the limited cgroup is a scope";
    EXPECT_LE(c->stall.level, VerdictLevel::kLow) << "t=" << t;
    EXPECT_FALSE(has(codes(c->stall.reasons), stall_reason::kThrashing)) << "t=" << t;
    // The streaming job holds 240 KiB of anon: not what stalls anything, however alone it is.
    for (const auto& m : s->derived.node_scope->members) EXPECT_NE(m.role, PressureRole::kContributor) << m.cgroup;
    most_refaults = std::max(most_refaults, c->stall.figures.refault_ratio.value_or(0));
  }
  // What makes it streaming rather than quiet: it refaulted its whole cache many times over, at
  // its limit all the time.
  EXPECT_GT(most_refaults, 5.0);
  const CgroupSample* end = cgroup(r.last(), stream);
  ASSERT_NE(end, nullptr);
  EXPECT_GT(*end->failcnt, 1000u);
}

// The seed in miniature, real: /memdiag-rec-seed limited to 640 MiB, two readers re-reading
// 150 MiB files, then a grower taking 480 MiB of anonymous memory, then all stopped.
TEST(RecordedOnThisMachine, MemcgPressureNamesTheGrowerAndTheReaders) {
  const Replayed r = replay_fixture("memcg-pressure");
  const std::string parent = "/memdiag-rec-seed";
  // When the parent's own PSI (of its cgroup2 twin) first moved, and when its level rose.
  std::optional<int> psi_moved, rose;
  std::uint64_t psi_before = 0;
  for (const auto& [t, s] : r.at) {
    const CgroupSample* c = cgroup(*s, parent);
    ASSERT_NE(c, nullptr);
    ASSERT_TRUE(c->pressure);
    if (!psi_moved && t > 0 && c->pressure->some.total_us > psi_before) psi_moved = t;
    psi_before = c->pressure->some.total_us;
    if (!rose && scope(*s, parent)->stall.level >= VerdictLevel::kLow) rose = t;
  }
  ASSERT_TRUE(psi_moved && rose);
  EXPECT_GE(*rose, *psi_moved);
  EXPECT_LE(*rose - *psi_moved, 3) << "the parent's level rose " << *rose - *psi_moved << " s after its PSI moved";

  // Two seconds after the rise, with the growth EMA warm: the grower first, the readers victims.
  const Snapshot& during = r.second(*rose + 2);
  const CgroupScope& seed = *scope(during, parent);
  EXPECT_GE(seed.stall.level, VerdictLevel::kMedium);
  EXPECT_EQ(seed.stall.reasons.front().code, stall_reason::kStallTime);
  EXPECT_TRUE(has(codes(seed.stall.reasons), stall_reason::kThrashing));
  ASSERT_GE(seed.analysis.members.size(), 3u);
  EXPECT_EQ(seed.analysis.members[0].cgroup, parent + "/grower");
  EXPECT_EQ(seed.analysis.members[0].role, PressureRole::kContributor);
  EXPECT_EQ(member(seed.analysis, parent + "/reader1")->role, PressureRole::kVictim);
  EXPECT_EQ(member(seed.analysis, parent + "/reader2")->role, PressureRole::kVictim);
  // Stopping the grower would free its anonymous memory, all of its relief.
  const CgroupSample& grower = *cgroup(during, parent + "/grower");
  EXPECT_EQ(seed.analysis.members[0].relief_bytes, stat_of(grower, "anon"));
  EXPECT_GT(seed.analysis.members[0].relief_bytes, 300 * kMiB);

  // After the jobs end, back to none, within the recording's last 30 s.
  EXPECT_EQ(scope(r.last(), parent)->stall.level, VerdictLevel::kNone);
  EXPECT_EQ(r.last().derived.stall->level, VerdictLevel::kNone);
  int parent_rises = 0;
  for (const auto& t : r.transitions) {
    if (t.scope == parent && t.from == VerdictLevel::kNone) ++parent_rises;
  }
  EXPECT_EQ(parent_rises, 1) << "one rise from none, logged once";
}

// A process maps 8 GiB private and writable and touches none of it (mode 0 allows it), then
// touches 1 GiB: the unbacked promise rises by ~8 GiB, the process and its cgroup are named,
// and the touched part moves from unbacked to resident.
TEST(RecordedOnThisMachine, AnUnbackedPromiseIsNamedAndPaidDownWhenTouched) {
  const Replayed r = replay_fixture("unbacked-promise");
  const std::string holder_cgroup = "/memdiag-rec-promise";
  const OvercommitVerdict& first = *r.at.begin()->second->derived.overcommit;
  ASSERT_TRUE(first.unbacked_bytes);
  // The largest unbacked promise of the recording, and the snapshot that holds it.
  const Snapshot* peak = nullptr;
  const Snapshot* touched = nullptr;
  for (const auto& [t, s] : r.at) {
    const auto holders = report::top_promise_processes(*s->processes);
    if (holders.empty() || holders[0]->comm != "memdiag-promise") continue;
    if (!peak) peak = s.get();
    if (cgroup(*s, holder_cgroup) && stat_of(*cgroup(*s, holder_cgroup), "anon") > 900 * kMiB) touched = s.get();
  }
  ASSERT_NE(peak, nullptr) << "the process was never named the top holder";
  ASSERT_NE(touched, nullptr) << "the touch never showed";
  const auto* process = report::top_promise_processes(*peak->processes)[0];
  EXPECT_NEAR(static_cast<double>(process->unbacked_promise_bytes), 8.0 * kGiB, 64.0 * kMiB);
  EXPECT_EQ(process->cgroup, holder_cgroup);
  const auto cgroups = report::top_promise_cgroups(*peak->processes);
  ASSERT_FALSE(cgroups.empty());
  EXPECT_EQ(cgroups[0]->cgroup, holder_cgroup);
  // The node's unbacked promise rose by about that much (other processes come and go: 1 GiB).
  EXPECT_NEAR(static_cast<double>(*peak->derived.overcommit->unbacked_bytes) - static_cast<double>(*first.unbacked_bytes),
              8.0 * kGiB, 1.0 * kGiB);
  // Touching 1 GiB moved 1 GiB from unbacked to resident.
  const auto* after = report::top_promise_processes(*touched->processes)[0];
  EXPECT_NEAR(static_cast<double>(process->unbacked_promise_bytes - after->unbacked_promise_bytes), 1.0 * kGiB,
              64.0 * kMiB);
  // 8 GiB unbacked against ~20 GiB the node can supply, in mode 0: a figure, not a risk.
  EXPECT_EQ(touched->derived.overcommit->level, VerdictLevel::kNone);
}

}  // namespace
}  // namespace memdiag
