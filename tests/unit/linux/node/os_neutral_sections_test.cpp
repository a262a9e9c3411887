// SPDX-License-Identifier: Apache-2.0
// The OS-neutral sections Linux fills from what it already reads: system memory from meminfo,
// the overcommit policy from the vm sysctls, per-process memory from the process scan. Values
// are the fixture files' own numbers (kB x 1024).
#include <gtest/gtest.h>

#include <algorithm>

#include "probes/catalog/source_catalog.hpp"
#include "probes/linux/node/meminfo_system_memory.hpp"
#include "probes/linux/node/vm_sysctl_source.hpp"
#include "probes/linux/process/process_source.hpp"

namespace memdiag {
namespace {

const std::string kFixtures = MEMDIAG_SOURCE_DIR "/tests/fixtures";

Snapshot sample(const std::string& tree, std::initializer_list<std::string_view> names) {
  Snapshot snap;
  for (std::string_view name : names) {
    auto source = make_source(name, KernelPaths{kFixtures + "/" + tree + "/proc", "/sys"});
    EXPECT_TRUE(source->probe()) << name;
    EXPECT_TRUE(source->sample(snap)) << name;
  }
  return snap;
}

TEST(SystemMemory, FromMeminfoOfTwoKernels) {
  const Snapshot k618 = sample("kernel-6.18", {"meminfo"});
  ASSERT_TRUE(k618.system_memory);
  EXPECT_EQ(k618.system_memory->physical_total_bytes, 24683656ull * 1024);
  EXPECT_EQ(k618.system_memory->physical_available_bytes, 24353680ull * 1024);
  EXPECT_EQ(k618.system_memory->swap_total_bytes, 0u);
  EXPECT_EQ(k618.system_memory->commit_charge_bytes, 49352ull * 1024);
  EXPECT_EQ(k618.system_memory->commit_limit_bytes, 12341828ull * 1024);

  const Snapshot k310 = sample("kernel-3.10", {"meminfo"});
  ASSERT_TRUE(k310.system_memory);
  EXPECT_EQ(k310.system_memory->physical_total_bytes, 7990056ull * 1024);
  EXPECT_EQ(k310.system_memory->swap_total_bytes, 2097148ull * 1024);
  EXPECT_EQ(k310.system_memory->swap_free_bytes, 812044ull * 1024);
  // Committed_AS over twice CommitLimit: the promises an overcommitting node makes.
  EXPECT_EQ(k310.system_memory->commit_charge_bytes, 13877320ull * 1024);
  EXPECT_EQ(k310.system_memory->commit_limit_bytes, 6092176ull * 1024);
}

TEST(SystemMemory, WithoutMemAvailableMemFreeStandsInAndWithoutMemTotalNothing) {
  auto schema = std::make_shared<FieldSchema>();
  schema->names = {"MemTotal", "MemFree", "Buffers"};
  schema->kinds = {FieldKind::kBytes, FieldKind::kBytes, FieldKind::kBytes};
  FieldTable table{schema, {1000, 300, 7}};
  MeminfoSystemMemory from;
  auto memory = from.from(table);
  ASSERT_TRUE(memory);
  EXPECT_EQ(memory->physical_total_bytes, 1000u);
  EXPECT_EQ(memory->physical_available_bytes, 300u);
  EXPECT_FALSE(memory->commit_charge_bytes);
  EXPECT_FALSE(memory->commit_limit_bytes);
  // A new schema (another field set) is looked up again.
  auto other = std::make_shared<FieldSchema>();
  other->names = {"MemFree"};
  other->kinds = {FieldKind::kBytes};
  EXPECT_FALSE(from.from(FieldTable{other, {5}}));
}

TEST(OvercommitPolicy, FromTheVmSysctls) {
  const Snapshot snap = sample("kernel-6.18", {"vm_sysctl"});
  ASSERT_TRUE(snap.overcommit_policy);
  EXPECT_EQ(snap.overcommit_policy->mode, OvercommitMode::kHeuristic);
  EXPECT_EQ(snap.overcommit_policy->ratio_percent, 50.0);
  EXPECT_FALSE(snap.overcommit_policy->kbytes);  // 0: the ratio applies

  VmSysctlSection sysctls{{{"overcommit_memory", 1}, {"overcommit_kbytes", 4096}}};
  auto always = overcommit_policy_from(sysctls);
  ASSERT_TRUE(always);
  EXPECT_EQ(always->mode, OvercommitMode::kAlways);
  EXPECT_EQ(always->kbytes, 4096u);
  EXPECT_EQ(to_string(always->mode), "always");
  EXPECT_FALSE(overcommit_policy_from(VmSysctlSection{{{"overcommit_memory", 7}}}));   // unknown mode
  EXPECT_FALSE(overcommit_policy_from(VmSysctlSection{{{"overcommit_ratio", 50}}}));   // no mode at all
}

TEST(ProcessMemory, TheSelectedProcessesInNeutralTerms) {
  ProcessOptions options;
  options.process_scan = ProcessScanMode::kProcfs;
  ProcessSource source(KernelPaths{kFixtures + "/kernel-6.18/proc", "/sys"}, options, {}, /*self_pid=*/1);
  ASSERT_TRUE(source.probe());
  Snapshot snap;
  ASSERT_TRUE(source.sample(snap));
  ASSERT_TRUE(snap.processes);
  ASSERT_TRUE(snap.process_memory);
  EXPECT_EQ(snap.process_memory->total_processes, snap.processes->processes);
  ASSERT_EQ(snap.process_memory->processes.size(), snap.processes->selected.size());
  ASSERT_FALSE(snap.process_memory->processes.empty());
  for (std::size_t i = 0; i < snap.processes->selected.size(); ++i) {
    const SelectedProcess& linux_view = snap.processes->selected[i];
    const ProcessMemory& neutral = snap.process_memory->processes[i];
    EXPECT_EQ(neutral.pid, linux_view.pid);
    EXPECT_EQ(neutral.name, linux_view.comm);
    EXPECT_EQ(neutral.resident_bytes,
              linux_view.rss_anon_bytes + linux_view.rss_file_bytes + linux_view.rss_shmem_bytes);
    EXPECT_EQ(neutral.swap_bytes, linux_view.swap_bytes);
    EXPECT_EQ(neutral.virtual_bytes, linux_view.virtual_bytes);
    EXPECT_EQ(neutral.map_areas, linux_view.map_count);
    EXPECT_EQ(neutral.committed_private_bytes, linux_view.committed_private_bytes);
    EXPECT_EQ(neutral.unbacked_promise_bytes, linux_view.unbacked_promise_bytes);
  }
  const auto zig = std::find_if(snap.process_memory->processes.begin(), snap.process_memory->processes.end(),
                                [](const ProcessMemory& p) { return p.pid == 4242; });
  ASSERT_NE(zig, snap.process_memory->processes.end());
  EXPECT_EQ(zig->name, "zig-test");
  EXPECT_EQ(zig->resident_bytes, (800768ull + 1536) * 1024);  // RssAnon + RssFile + RssShmem
  EXPECT_EQ(zig->virtual_bytes, 1648252ull * 1024);
  EXPECT_EQ(zig->map_areas, 12u);
  EXPECT_EQ(zig->committed_private_bytes, (1600128ull + 132) * 1024);  // VmData + VmStk
  EXPECT_EQ(zig->unbacked_promise_bytes, (1600128ull + 132 - 800768 - 0) * 1024);  // - RssAnon - VmSwap
}

}  // namespace
}  // namespace memdiag
