// SPDX-License-Identifier: Apache-2.0
// Sources against fixture trees shaped like several kernels' /proc, and against this
// machine's real /proc.
#include <gtest/gtest.h>

#include <array>

#include <stdlib.h>

#include <cstdio>
#include <sstream>
#include <filesystem>
#include <cctype>
#include <fstream>

#include "probes/linux/kernel_file.hpp"
#include "probes/catalog/source_catalog.hpp"
#include "probes/linux/node/vm_sysctl_registration.hpp"

namespace memdiag {
namespace {

const std::string kFixtures = MEMDIAG_SOURCE_DIR "/tests/fixtures";
constexpr std::array<std::string_view, 4> kNodeSources = {"meminfo", "vmstat", "pressure", "vm_sysctl"};

// A fresh directory per test, so concurrent runs of the suite never share files.
std::string make_temp_dir() {
  std::string pattern = ::testing::TempDir() + "/memdiag-test-XXXXXX";
  const char* made = mkdtemp(pattern.data());
  EXPECT_NE(made, nullptr);
  return pattern;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Snapshot sample_all(const std::string& procfs, std::vector<std::string>* errors = nullptr) {
  Snapshot snap;
  for (std::string_view name : kNodeSources) {  // cgroup trees have their own tests
    auto source = make_source(name, KernelPaths{procfs, "/sys"});
    Status st = source->probe();
    if (st) st = source->sample(snap);
    if (!st && errors) errors->push_back(std::string(name) + ": " + st.error().message);
  }
  return snap;
}

TEST(Sources, Kernel618Tree) {
  std::vector<std::string> errors;
  Snapshot snap = sample_all(kFixtures + "/kernel-6.18/proc", &errors);
  EXPECT_TRUE(errors.empty()) << errors.front();
  ASSERT_TRUE(snap.meminfo);
  EXPECT_EQ(snap.meminfo->get("MemTotal"), 24683656ull * 1024);
  EXPECT_TRUE(snap.meminfo->get("SecPageTables").has_value());
  ASSERT_TRUE(snap.vmstat);
  EXPECT_TRUE(snap.vmstat->get("workingset_refault_file").has_value());
  EXPECT_EQ(snap.vmstat->schema->size(), 192u);
  ASSERT_TRUE(snap.pressure);
  for (const auto& r : snap.pressure->resources) {
    ASSERT_TRUE(r.has_value());
    EXPECT_TRUE(r->full.has_value());
  }
  ASSERT_TRUE(snap.vm_sysctl);
  EXPECT_EQ(snap.vm_sysctl->values.size(), 25u);
}

TEST(Sources, Kernel54TreeCpuPsiWithoutFull) {
  std::vector<std::string> errors;
  Snapshot snap = sample_all(kFixtures + "/kernel-5.4/proc", &errors);
  EXPECT_TRUE(errors.empty()) << errors.front();
  ASSERT_TRUE(snap.pressure);
  const auto& cpu = snap.pressure->resources[static_cast<int>(PsiResourceKind::kCpu)];
  ASSERT_TRUE(cpu.has_value());
  EXPECT_FALSE(cpu->full.has_value());
  EXPECT_DOUBLE_EQ(cpu->some.avg10, 0.45);
  const auto& memory = snap.pressure->resources[static_cast<int>(PsiResourceKind::kMemory)];
  EXPECT_EQ(memory->full->total_us, 456789012u);
  EXPECT_EQ(snap.vmstat->get("allocstall_normal"), 88110u);
  EXPECT_EQ(snap.vmstat->get("workingset_refault"), 4410234u);
  EXPECT_FALSE(snap.meminfo->get("SecPageTables").has_value());
  EXPECT_TRUE(snap.meminfo->get("KReclaimable").has_value());
}

TEST(Sources, Kernel310TreeHasNoPsi) {
  auto pressure = make_source("pressure", KernelPaths{kFixtures + "/kernel-3.10/proc", "/sys"});
  auto st = pressure->probe();
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("PSI not available"), std::string::npos);

  std::vector<std::string> errors;
  Snapshot snap = sample_all(kFixtures + "/kernel-3.10/proc", &errors);
  ASSERT_EQ(errors.size(), 1u);  // only pressure
  EXPECT_FALSE(snap.pressure);
  EXPECT_EQ(snap.vmstat->get("allocstall"), 90122u);
  EXPECT_EQ(snap.vmstat->get("pgscan_direct_normal"), 5011223u);
  EXPECT_EQ(snap.meminfo->get("Committed_AS"), 13877320ull * 1024);
  // A sysctl this kernel lacks is skipped, not an error.
  ASSERT_TRUE(snap.vm_sysctl);
  for (const auto& v : snap.vm_sysctl->values) EXPECT_NE(v.name, "compaction_proactiveness");
}

TEST(Sources, BrokenTreeMarksEachSourceDownWithTheReason) {
  const KernelPaths paths{kFixtures + "/broken/proc", "/sys"};
  Snapshot snap;
  auto meminfo = make_source("meminfo", paths);
  auto st = meminfo->sample(snap);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("line 2"), std::string::npos) << st.error().message;
  EXPECT_NE(st.error().message.find("meminfo"), std::string::npos);
  EXPECT_FALSE(snap.meminfo);

  auto vmstat = make_source("vmstat", paths);
  EXPECT_FALSE(vmstat->sample(snap));
  EXPECT_FALSE(snap.vmstat);

  auto pressure = make_source("pressure", paths);
  auto pst = pressure->sample(snap);
  ASSERT_FALSE(pst);
  EXPECT_NE(pst.error().message.find("pressure/memory"), std::string::npos);
  EXPECT_FALSE(snap.pressure);

  auto sysctl = make_source("vm_sysctl", paths);
  auto sst = sysctl->sample(snap);
  ASSERT_FALSE(sst);
  EXPECT_NE(sst.error().message.find("max_map_count"), std::string::npos);
}

TEST(Sources, MissingTreeIsUnsupported) {
  for (std::string_view name : {"meminfo", "vmstat", "pressure", "vm_sysctl", "cgroup"}) {
    auto source = make_source(name, KernelPaths{"/nonexistent-procfs", "/sys"});
    EXPECT_FALSE(source->probe()) << name;
    Snapshot snap;
    EXPECT_FALSE(source->sample(snap)) << name;
  }
}

TEST(Sources, SchemaIsSharedBetweenSamplesOfTheSameKernel) {
  auto vmstat = make_source("vmstat", KernelPaths{});
  Snapshot a, b;
  ASSERT_TRUE(vmstat->sample(a));
  ASSERT_TRUE(vmstat->sample(b));
  EXPECT_EQ(a.vmstat->schema.get(), b.vmstat->schema.get());
}

TEST(Sources, RealProcMatchesAFreshRead) {
  auto meminfo = make_source("meminfo", KernelPaths{});
  Snapshot snap;
  ASSERT_TRUE(meminfo->sample(snap));
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t kb = 0;
  in >> key >> kb;
  ASSERT_EQ(key, "MemTotal:");
  EXPECT_EQ(snap.meminfo->get("MemTotal"), kb * 1024);
}

TEST(Sources, VmSysctlServesTheLastValuesUntilTheRefreshIsDue) {
  const std::string root = make_temp_dir();
  std::filesystem::create_directories(root + "/sys/vm");
  auto write = [&root](const char* value) { std::ofstream(root + "/sys/vm/overcommit_memory", std::ios::trunc) << value; };
  auto overcommit = [](const Snapshot& snap) {
    for (const auto& v : snap.vm_sysctl->values) {
      if (v.name == "overcommit_memory") return v.value;
    }
    return -1.0;
  };
  write("0\n");
  VmSysctlOptions hourly;
  hourly.refresh_interval = std::chrono::hours(1);
  auto slow = make_source("vm_sysctl", KernelPaths{root, "/sys"}, hourly);
  auto every = make_source("vm_sysctl", KernelPaths{root, "/sys"}, VmSysctlOptions{.refresh_interval = std::chrono::milliseconds(0)});
  Snapshot a, b;
  ASSERT_TRUE(slow->sample(a));
  ASSERT_TRUE(every->sample(a));
  write("1\n");
  Snapshot slow_snap, every_snap;
  ASSERT_TRUE(slow->sample(slow_snap));
  ASSERT_TRUE(every->sample(every_snap));
  EXPECT_EQ(overcommit(slow_snap), 0);   // not due: last value served
  EXPECT_EQ(overcommit(every_snap), 1);  // every sample reads
  // A failure is never hidden behind cached values, even when no refresh is due... once due.
  write("garbage\n");
  Snapshot c;
  EXPECT_FALSE(every->sample(c));
  EXPECT_FALSE(c.vm_sysctl);
  std::filesystem::remove_all(root);
}

TEST(Sources, VmstatHasEveryFieldOfTheRealFile) {
  auto vmstat = make_source("vmstat", KernelPaths{});
  Snapshot snap;
  ASSERT_TRUE(vmstat->sample(snap));
  std::istringstream in(slurp("/proc/vmstat"));
  std::vector<std::string> names;
  for (std::string name, value; in >> name >> value;) names.push_back(name);
  EXPECT_EQ(snap.vmstat->schema->names, names);
}

}  // namespace
}  // namespace memdiag
