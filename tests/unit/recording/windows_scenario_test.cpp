// SPDX-License-Identifier: Apache-2.0
// The diagnosis on Windows values, run natively here: a Windows node's snapshots as
// the Windows sources fill them (windows_memory, windows_paging, windows_processes), written to a
// recording (format 2, the version with the Windows sections) and read back, then replayed
// through the same models as `memdiagd diagnose --replay`. The values are hand-written in the
// shape a real Windows host gives (wine leaves the paging counters and private bytes out),
// for an incident this machine cannot stage: one process's private bytes growing
// until the commit charge nears the commit limit, the memory manager trimming working sets
// (the low-memory notification) and programs waiting for their pages (hard faults).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "exporters/report/diagnosis_report.hpp"
#include "exporters/report/next_steps.hpp"
#include "probes/analysis/diagnosis_replay.hpp"
#include "probes/recording/recording_reader.hpp"
#include "probes/recording/recording_writer.hpp"

namespace memdiag {
namespace {

using namespace std::chrono_literals;
constexpr std::uint64_t kMiB = 1ull << 20;
constexpr std::uint64_t kGiB = 1ull << 30;
const auto kStart = std::chrono::system_clock::time_point{} + std::chrono::hours(24 * 365 * 56);

// 16 GiB of RAM and 8 GiB of page files: a 24 GiB commit limit. trainer.exe's private bytes grow
// 400 MiB/s from t=5 to t=33 (11 GiB to ~22 GiB of commit charge in all); from t=20 to t=40 the
// memory manager signals low memory and 6,000 pages a second come back from disk; after t=40
// the trainer is stopped and everything is calm again.
std::shared_ptr<Snapshot> windows_node_at(int t) {
  auto s = std::make_shared<Snapshot>();
  s->sequence = static_cast<std::uint64_t>(t) + 1;
  s->taken_at = kStart + std::chrono::seconds(t);
  const bool trainer_runs = t <= 40;
  const std::uint64_t trainer = !trainer_runs ? 0 : 1 * kGiB + static_cast<std::uint64_t>(std::clamp(t - 5, 0, 28)) * 400 * kMiB;
  const std::uint64_t sql = 7 * kGiB;
  const std::uint64_t rest = 3 * kGiB;
  const std::uint64_t charge = trainer + sql + rest;

  SystemMemory m;
  m.physical_total_bytes = 16 * kGiB;
  m.physical_available_bytes = charge >= 15 * kGiB ? 300 * kMiB : 16 * kGiB - charge - kGiB;
  m.swap_total_bytes = 8 * kGiB;
  m.swap_free_bytes = charge > 16 * kGiB ? 24 * kGiB - charge : 8 * kGiB;
  m.commit_charge_bytes = charge;
  m.commit_limit_bytes = 24 * kGiB;
  s->system_memory = m;
  s->overcommit_policy = OvercommitPolicy{OvercommitMode::kNever, std::nullopt, std::nullopt};

  const bool low = t >= 20 && t <= 40;
  WindowsMemorySection w;
  w.commit_peak_bytes = std::max<std::uint64_t>(charge, 12 * kGiB);
  w.system_cache_bytes = low ? 200 * kMiB : 2 * kGiB;
  w.kernel_paged_pool_bytes = 400 * kMiB;
  w.kernel_nonpaged_pool_bytes = 150 * kMiB;
  w.memory_load_percent = static_cast<std::uint32_t>(100 - 100 * m.physical_available_bytes / m.physical_total_bytes);
  w.processes = 140;
  w.threads = 2100;
  w.handles = 61000;
  w.low_memory = low;
  w.low_memory_signals_total = t >= 20 ? 1 : 0;
  s->windows_memory = w;

  // Cumulative, as PDH's raw counters: 20 pages in a second when calm, 6,000 during the episode.
  const auto pages_in = [](int at) {
    std::uint64_t total = 1'000'000;
    for (int i = 1; i <= at; ++i) total += (i > 20 && i <= 40) ? 6000 : 20;
    return total;
  };
  WindowsPagingSection paging;
  paging.pages_input_total = pages_in(t);
  paging.hard_faults_total = pages_in(t) / 8;  // reads of 8 pages each
  paging.page_faults_total = 50'000'000 + static_cast<std::uint64_t>(t) * 40'000;
  paging.pages_output_total = 200'000 + static_cast<std::uint64_t>(t) * 100;
  s->windows_paging = paging;

  ProcessMemorySection processes;
  const auto process = [](int pid, const char* name, std::uint64_t private_bytes, std::uint64_t working_set) {
    ProcessMemory p;
    p.pid = pid;
    p.name = name;
    p.resident_bytes = working_set;
    p.committed_private_bytes = private_bytes;
    p.unbacked_promise_bytes = private_bytes > working_set ? private_bytes - working_set : 0;
    p.peak_resident_bytes = working_set;
    p.page_faults_total = 1000;
    return p;
  };
  if (trainer_runs) processes.processes.push_back(process(4242, "trainer.exe", trainer, trainer * 3 / 4));
  processes.processes.push_back(process(1000, "sqlservr.exe", sql, low ? 2 * kGiB : 6 * kGiB));
  processes.processes.push_back(process(3100, "explorer.exe", 150 * kMiB, 120 * kMiB));
  processes.total_processes = 140;
  s->process_memory = processes;

  s->sources = {{"windows_memory", true, 0.001, ""}, {"windows_paging", true, 0.002, ""},
                {"windows_processes", true, 0.004, ""}};
  return s;
}

struct Replayed {
  std::map<int, SnapshotPtr> at;
  std::vector<VerdictTransition> transitions;
};

// Written to a recording (format 2), read back, replayed with the default settings.
Replayed replay_windows_incident() {
  std::vector<std::shared_ptr<Snapshot>> taken;
  std::vector<const Snapshot*> raw;
  for (int t = 0; t <= 60; ++t) {
    taken.push_back(windows_node_at(t));
    raw.push_back(taken.back().get());
  }
  const recording::RecordingHeader header{"hand-written", "win-node", "Windows 10.0.20348", 1000ms, kStart};
  auto reader = recording::RecordingReader::open(recording::encode_recording(header, raw));
  Replayed out;
  EXPECT_TRUE(reader.ok()) << reader.error().message;
  if (!reader) return out;
  analysis::DiagnosisReplay models({}, 300);
  for (int t = 0;; ++t) {
    auto next = reader->next();
    EXPECT_TRUE(next.ok()) << next.error().message;
    if (!next || !*next) break;
    std::shared_ptr<Snapshot> s = std::move(**next);
    // What was recorded is what was taken: the Windows sections survive the format.
    EXPECT_EQ(s->windows_memory, taken[static_cast<std::size_t>(t)]->windows_memory) << "t=" << t;
    EXPECT_EQ(s->windows_paging, taken[static_cast<std::size_t>(t)]->windows_paging) << "t=" << t;
    for (auto& transition : models.add(s)) out.transitions.push_back(std::move(transition));
    out.at[t] = models.latest();
  }
  return out;
}

std::vector<std::string_view> codes(const std::vector<VerdictReason>& reasons) {
  std::vector<std::string_view> out;
  for (const auto& r : reasons) out.push_back(r.code);
  return out;
}

const VerdictReason* reason(const StallVerdict& v, std::string_view code) {
  for (const auto& r : v.reasons) {
    if (r.code == code) return &r;
  }
  return nullptr;
}

bool has(const std::vector<std::string_view>& v, std::string_view x) { return std::find(v.begin(), v.end(), x) != v.end(); }

TEST(WindowsScenario, CalmBeforeTheEpisodeWithCommitHeadroomAsAvailableMemory) {
  const Replayed r = replay_windows_incident();
  ASSERT_EQ(r.at.size(), 61u);
  const Snapshot& calm = *r.at.at(10);
  const StallVerdict& stall = *calm.derived.stall;
  EXPECT_EQ(stall.level, VerdictLevel::kNone);
  EXPECT_TRUE(stall.reasons.empty());
  EXPECT_TRUE(has(stall.signals, stall_signal::kPaging));
  EXPECT_TRUE(has(stall.signals, stall_signal::kLowMemory));
  ASSERT_TRUE(stall.figures.pages_input_per_second);
  EXPECT_NEAR(*stall.figures.pages_input_per_second, 20, 1e-9);
  EXPECT_NEAR(*stall.figures.hard_faults_per_second, 2.5, 1e-9);
  EXPECT_EQ(stall.figures.low_memory, 0);
  // The kubelet's memory.available on Windows: the commit limit less the commit charge.
  const std::uint64_t charge = *calm.system_memory->commit_charge_bytes;
  EXPECT_EQ(calm.derived.node_scope->available_bytes, 24 * kGiB - charge);
}

TEST(WindowsScenario, HardFaultsAndLowMemoryMakeTheNodeStallAndNameTheTrainer) {
  const Replayed r = replay_windows_incident();
  const Snapshot& s = *r.at.at(30);
  const StallVerdict& stall = *s.derived.stall;
  EXPECT_EQ(stall.level, VerdictLevel::kHigh) << ::testing::PrintToString(codes(stall.reasons));
  const VerdictReason* faults = reason(stall, stall_reason::kHardFaults);
  ASSERT_NE(faults, nullptr);
  EXPECT_EQ(faults->level, VerdictLevel::kHigh);
  EXPECT_NEAR(faults->value, 6000, 1e-9);
  EXPECT_EQ(faults->threshold, 4096);
  const VerdictReason* low = reason(stall, stall_reason::kLowMemory);
  ASSERT_NE(low, nullptr);
  EXPECT_EQ(low->level, VerdictLevel::kMedium);
  EXPECT_EQ(stall.reasons.front().code, stall_reason::kHardFaults);  // highest first

  // The contributor: the process whose private bytes hold and grow most of the commit charge.
  const ScopeAnalysis& node = *s.derived.node_scope;
  ASSERT_FALSE(node.processes.empty());
  const ScopeProcess& top = node.processes.front();
  EXPECT_EQ(top.pid, 4242);
  EXPECT_EQ(top.comm, "trainer.exe");
  EXPECT_EQ(top.cgroup, "");
  EXPECT_EQ(top.footprint_bytes, 1 * kGiB + 25 * 400 * kMiB);
  EXPECT_EQ(top.relief_bytes, top.footprint_bytes);
  ASSERT_TRUE(top.growth_bytes_per_second);
  EXPECT_GT(*top.growth_bytes_per_second, 200.0 * kMiB);  // an EMA approaching 400 MiB/s
  for (const ScopeProcess& p : node.processes) EXPECT_NE(p.comm, "explorer.exe");
  // The commit headroom is the node's available memory, and it is short.
  EXPECT_EQ(node.available_bytes, 24 * kGiB - *s.system_memory->commit_charge_bytes);

  // Windows enforces its commit limit: the overcommit verdict is about that limit.
  const OvercommitVerdict& o = *s.derived.overcommit;
  EXPECT_EQ(o.mode, OvercommitMode::kNever);
  EXPECT_GE(o.level, VerdictLevel::kLow);
  EXPECT_TRUE(has(codes(o.reasons), overcommit_reason::kCommitLimit));

  // What a person reads: Windows's advice, not Linux's.
  const std::vector<std::string> steps = report::next_steps(s);
  const auto mentions = [&](std::string_view text) {
    return std::any_of(steps.begin(), steps.end(), [&](const std::string& x) { return x.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(mentions("pid 4242 (trainer.exe) holds"));
  EXPECT_TRUE(mentions("hard faults"));
  EXPECT_TRUE(mentions("low-memory notification"));
  EXPECT_TRUE(mentions("enlarge the page files"));
  EXPECT_FALSE(mentions("vm.overcommit_ratio"));
  EXPECT_FALSE(mentions("bpftrace"));
  const std::string json = report::render_diagnosis_json(s, {.since = {}, .origin = "replay"});
  EXPECT_NE(json.find("\"mode_meaning\":\"Windows enforces its commit limit"), std::string::npos);
  EXPECT_NE(json.find("\"pages_input_per_second\":6000"), std::string::npos);
  EXPECT_NE(json.find("hard_faults"), std::string::npos);
  const std::string text = report::render_diagnosis_text(s, {.since = {}, .origin = "replay"});
  EXPECT_NE(text.find("commit charge / commit limit: 0.8"), std::string::npos) << text;
  EXPECT_EQ(text.find("Committed_AS"), std::string::npos) << text;
}

TEST(WindowsScenario, TheStoryEndsAfterTheHoldOnceTheTrainerIsStopped) {
  const Replayed r = replay_windows_incident();
  EXPECT_EQ(r.at.at(45)->derived.stall->level, VerdictLevel::kHigh);  // held 10 s after the episode
  EXPECT_EQ(r.at.at(60)->derived.stall->level, VerdictLevel::kNone);
  EXPECT_FALSE(r.transitions.empty());
  EXPECT_EQ(r.transitions.front().scope, "node");
  EXPECT_EQ(r.transitions.back().to, VerdictLevel::kNone);
  const Snapshot& after = *r.at.at(60);
  EXPECT_TRUE(after.derived.node_scope->processes.empty());
  EXPECT_EQ(after.derived.node_scope->available_bytes, 24 * kGiB - 10 * kGiB);
}

}  // namespace
}  // namespace memdiag
