// SPDX-License-Identifier: Apache-2.0
// The Win32 sources on a real Win32 API (wine in CI): each call succeeds and fills
// its sections with what wine really provides. Values wine leaves at 0 (CommitPeak,
// SystemCache, PrivateUsage, PageFaultCount) are not asserted: their derivations are tested
// natively (tests/unit/windows).
#include <gtest/gtest.h>

#include <windows.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "exporters/prometheus/snapshot_collector.hpp"
#include "probes/analysis/diagnosis_model.hpp"
#include "probes/canary/canary_settings.hpp"
#include "probes/catalog/source_catalog.hpp"
#include "probes/core/snapshot_store.hpp"

namespace memdiag {
namespace {

TEST(WindowsCatalog, TheWindowsSourcesInSamplingOrder) {
  std::vector<std::string_view> names;
  for (const SourceRegistration& r : source_catalog()) {
    names.push_back(r.name);
    EXPECT_EQ(r.platform, Platform::kWindows) << r.name;
  }
  EXPECT_EQ(names, (std::vector<std::string_view>{"windows_memory", "windows_paging", "windows_processes", "canary"}));
}

// The canary on its Windows page layer, on wine's real page faults: cycles run on their thread,
// each first touch is timed, each cycle's memory goes back (decommitted) so the next faults
// again, and the allocator stays under its ceiling.
TEST(WindowsCanarySource, CyclesTimeRealPageFaultsAndGiveTheMemoryBack) {
  CanarySettings settings;
  settings.interval = std::chrono::milliseconds(100);
  settings.working_set_bytes = 4u << 20;
  settings.ceiling_bytes = 16u << 20;
  auto source = make_source("canary", KernelPaths{}, settings);
  ASSERT_NE(source, nullptr);
  ASSERT_TRUE(source->probe());
  Snapshot s;
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(source->sample(s));
    if (s.canary && s.canary->node.cycles >= 3) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(s.canary);
  const CanarySection& c = *s.canary;
  EXPECT_GE(c.node.cycles, 3u);
  EXPECT_EQ(c.node.failures, 0u);
  // 4 MiB of 4 KiB pages a cycle: 1024 timed first touches each.
  EXPECT_GE(c.node.page_fault.count, 3u * 1024);
  EXPECT_GT(c.node.page_fault.sum_ns, 0u);
  EXPECT_GE(c.allocator.released_bytes_total, 3u * (4u << 20));
  EXPECT_LE(c.allocator.held_bytes, 16u << 20);
  EXPECT_EQ(c.allocator.failed_allocations_total, 0u);
  EXPECT_EQ(source->degraded(), "");
}

TEST(WindowsMemorySource, FillsTheCommitAccountAndPhysicalMemory) {
  auto source = make_source("windows_memory", KernelPaths{});
  ASSERT_NE(source, nullptr);
  ASSERT_TRUE(source->probe()) << source->probe().error().message;
  Snapshot s;
  const Status status = source->sample(s);
  ASSERT_TRUE(status) << status.error().message;
  ASSERT_TRUE(s.system_memory);
  EXPECT_GT(s.system_memory->physical_total_bytes, 64ull << 20);
  EXPECT_LE(s.system_memory->physical_available_bytes, s.system_memory->physical_total_bytes);
  ASSERT_TRUE(s.system_memory->commit_limit_bytes);
  EXPECT_GT(*s.system_memory->commit_limit_bytes, 0u);
  ASSERT_TRUE(s.system_memory->commit_charge_bytes);
  EXPECT_GT(*s.system_memory->commit_charge_bytes, 0u);
  ASSERT_TRUE(s.overcommit_policy);
  EXPECT_EQ(s.overcommit_policy->mode, OvercommitMode::kNever);
  ASSERT_TRUE(s.windows_memory);
  ASSERT_TRUE(s.windows_memory->memory_load_percent);
  EXPECT_LE(*s.windows_memory->memory_load_percent, 100u);
  // The low-memory notification exists (wine creates it); this test does not make memory low.
  ASSERT_TRUE(s.windows_memory->low_memory) << source->degraded();
  EXPECT_FALSE(*s.windows_memory->low_memory);
  EXPECT_EQ(s.windows_memory->low_memory_signals_total, 0u);
}

// PDH's \Memory counters: where the system has them (a real Windows) the raw counts are there
// and only grow; where it has none (wine) the source is unsupported and says so, naming PDH.
TEST(WindowsPagingSource, CountersWhereTheSystemHasThemElseASaidRefusal) {
  auto source = make_source("windows_paging", KernelPaths{});
  ASSERT_NE(source, nullptr);
  const Status probe = source->probe();
  if (!probe) {
    EXPECT_NE(probe.error().message.find("PDH has none of the \\Memory paging counters"), std::string::npos)
        << probe.error().message;
    return;
  }
  Snapshot first, second;
  ASSERT_TRUE(source->sample(first));
  ::Sleep(50);
  ASSERT_TRUE(source->sample(second));
  ASSERT_TRUE(first.windows_paging && second.windows_paging);
  ASSERT_TRUE(second.windows_paging->page_faults_total) << source->degraded();
  EXPECT_GE(*second.windows_paging->page_faults_total, first.windows_paging->page_faults_total.value_or(0));
}

TEST(WindowsProcessSource, FindsItselfWithAWorkingSet) {
  auto source = make_source("windows_processes", KernelPaths{});
  ASSERT_NE(source, nullptr);
  ASSERT_TRUE(source->probe());
  // Touch 8 MiB so the working set is not nothing.
  std::string ballast(8u << 20, 'x');
  Snapshot s;
  const Status status = source->sample(s);
  ASSERT_TRUE(status) << status.error().message;
  ASSERT_TRUE(s.process_memory);
  EXPECT_GE(s.process_memory->total_processes, 1u);
  const auto self = std::find_if(s.process_memory->processes.begin(), s.process_memory->processes.end(),
                                 [](const ProcessMemory& p) { return p.pid == static_cast<int>(::GetCurrentProcessId()); });
  ASSERT_NE(self, s.process_memory->processes.end()) << "the daemon (here the test) is always selected";
  EXPECT_EQ(self->name, "memdiag_windows_tests.exe");
  EXPECT_GT(self->resident_bytes, 8u << 20);
  EXPECT_GE(*self->peak_resident_bytes, self->resident_bytes);
  EXPECT_LE(s.process_memory->processes.size(), 2u * 10 + 1) << "top 10 twice and itself at most";
  // The private working set is taken only where the system filled it (EX2, Windows 10 21H2+):
  // then the unbacked part is within the private bytes; wine leaves it out.
  for (const ProcessMemory& p : s.process_memory->processes) {
    if (p.unbacked_promise_bytes) {
      EXPECT_LE(*p.unbacked_promise_bytes, p.committed_private_bytes.value_or(0)) << p.pid;
    }
  }
  EXPECT_EQ(ballast[12345], 'x');
}

// Every Windows source sampled into one snapshot, judged by the models and rendered by the real
// exporter: the shared names carry Windows's values. With MEMDIAG_EXPOSITION_OUT set, the text
// is written there for promtool (windows/cross/check-exposition.sh).
TEST(WindowsExposition, TheSharedNamesCarryWindowsValues) {
  auto snapshot = std::make_shared<Snapshot>();
  snapshot->sequence = 1;
  snapshot->taken_at = std::chrono::system_clock::now();
  // As the sampler does: a source that cannot work here is down, the others go on.
  for (const SourceRegistration& r : source_catalog()) {
    auto source = make_source(r.name, KernelPaths{});
    Status status = source->probe();
    if (status) status = source->sample(*snapshot);
    snapshot->sources.push_back(SourceStatus{std::string(r.name), status.ok(), 0.001, status ? "" : status.error().message});
    if (r.name != "windows_paging") {
      ASSERT_TRUE(status) << r.name << ": " << status.error().message;
    }
  }
  analysis::DiagnosisModel model;
  model.assess(*snapshot, {});
  ASSERT_TRUE(snapshot->derived.overcommit);
  EXPECT_EQ(snapshot->derived.overcommit->mode, OvercommitMode::kNever);
  SnapshotStore store(4);
  store.publish(snapshot);
  prom::SnapshotCollector collector(store, prom::BuildInfo{"test", "test", "mingw"});
  std::string text;
  collector.render_text(text);
  const auto value_of = [&](const std::string& series) -> double {
    const std::size_t at = text.find("\n" + series + " ");
    if (at == std::string::npos) return -1;
    return std::strtod(text.c_str() + at + 1 + series.size() + 1, nullptr);
  };
  EXPECT_GT(value_of("memdiag_commit_limit_bytes"), 0) << text;
  EXPECT_GT(value_of("memdiag_commit_charge_bytes"), 0);
  EXPECT_GT(value_of("memdiag_memory_total_bytes"), 0);
  EXPECT_EQ(value_of("memdiag_source_up{source=\"windows_memory\"}"), 1);
  EXPECT_EQ(value_of("memdiag_source_up{source=\"windows_processes\"}"), 1);
  const std::string self = "memdiag_process_working_set_bytes{pid=\"" + std::to_string(::GetCurrentProcessId()) +
                           "\",comm=\"memdiag_windows_tests.exe\"}";
  EXPECT_GT(value_of(self), 0) << text;
  EXPECT_NE(text.find("memdiag_overcommit_mode_info{mode=\"never\",assumed=\"false\"} 1"), std::string::npos);
  if (const char* out = std::getenv("MEMDIAG_EXPOSITION_OUT")) {
    std::ofstream(out, std::ios::binary) << text;
  }
}

}  // namespace
}  // namespace memdiag
