// SPDX-License-Identifier: Apache-2.0
// The canary: a cycle really faults its working set in (the previous cycle gave it
// back), the runner backs off while PSI is at the threshold, and a broken or missing PSI file
// never stops it.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "probes/canary/canary_cycle.hpp"
#include "probes/canary/canary_runner.hpp"
#include "probes/canary/cgroup_headroom.hpp"

namespace memdiag::canary {
namespace {

namespace fs = std::filesystem;

// The slot below which half of the recorded durations fall.
std::size_t median_slot(const Log2Distribution& d) {
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < kLog2Slots; ++i) {
    seen += d.slots[i];
    if (seen * 2 >= d.count) return i;
  }
  return kLog2Slots;
}

TEST(CanaryCycle, EveryCycleFaultsItsWorkingSetInAndGivesItBack) {
  alloc::AllocatorOptions options;
  options.background_decay = false;
  alloc::SizeClassAllocator allocator(options);
  CanaryReading reading;
  const std::size_t working_set = 4u << 20;
  for (int i = 0; i < 3; ++i) run_cycle(allocator, working_set, reading);
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  EXPECT_EQ(reading.cycles, 3u);
  EXPECT_EQ(reading.failures, 0u);
  EXPECT_EQ(reading.cycle.count, 3u);
  EXPECT_GE(reading.page_fault.count, 3 * working_set / page);
  // A resident page is touched in tens of ns, a page fault takes microseconds: if the cycles
  // did not give their pages back, the later ones would only touch resident pages.
  EXPECT_GE(median_slot(reading.page_fault), 8u) << "median first touch under 256 ns: no page faults";
  const alloc::AllocatorStats stats = allocator.stats();
  EXPECT_EQ(stats.live_bytes, 0u);
  EXPECT_EQ(stats.held_bytes, 0u);
  EXPECT_GE(stats.released_bytes_total, 3 * working_set);
}

TEST(CanaryCycle, AWorkingSetOneMebibyteBelowTheCeilingAlwaysFits) {
  // The config's rule (daemon/config_loader.cpp): the cycle never asks for more than the working
  // set, and 1 MiB covers the allocator's rounding to spans.
  for (std::size_t working_set : {std::size_t{8192}, std::size_t{1} << 20, std::size_t{4} << 20,
                                  (std::size_t{16} << 20) + 12288}) {
    alloc::AllocatorOptions options;
    options.background_decay = false;
    options.process_ceiling_bytes = working_set + (1u << 20);
    alloc::SizeClassAllocator allocator(options);
    CanaryReading reading;
    for (int i = 0; i < 3; ++i) run_cycle(allocator, working_set, reading);
    EXPECT_EQ(reading.failures, 0u) << working_set;
    EXPECT_EQ(reading.cycles, 3u) << working_set;
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    EXPECT_EQ(reading.page_fault.count, 3 * (working_set / page)) << "every page of the working set, no more";
  }
}

TEST(CanaryCycle, AFailedAllocationIsAFailureAndLeavesNothingHeld) {
  alloc::AllocatorOptions options;
  options.background_decay = false;
  options.process_ceiling_bytes = 1u << 20;  // the working set does not fit
  alloc::SizeClassAllocator allocator(options);
  CanaryReading reading;
  run_cycle(allocator, 4u << 20, reading);
  EXPECT_EQ(reading.failures, 1u);
  EXPECT_EQ(reading.cycles, 0u);
  EXPECT_EQ(allocator.stats().live_bytes, 0u);
}

class CanaryRunnerPsi : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("memdiag-canary-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string psi(const std::string& full_avg10) {
    const fs::path file = dir_ / "memory";
    std::ofstream(file) << "some avg10=90.00 avg60=10.00 avg300=1.00 total=123456\n"
                        << "full avg10=" << full_avg10 << " avg60=5.00 avg300=1.00 total=65432\n";
    return file.string();
  }
  fs::path dir_;
};

TEST_F(CanaryRunnerPsi, SkipsWhileFullPressureIsAtTheThresholdAndResumesBelow) {
  CanaryOptions options;
  options.working_set_bytes = 1u << 20;
  options.backoff_psi_full = 10;
  options.psi_path = psi("10.00");
  CanaryRunner runner(options);
  runner.tick();
  runner.tick();
  CanaryReading r = runner.reading();
  EXPECT_EQ(r.skipped, 2u);
  EXPECT_EQ(r.cycles, 0u);
  EXPECT_TRUE(r.backing_off);
  EXPECT_DOUBLE_EQ(r.last_psi_full_avg10, 10);
  psi("9.99");  // same path, rewritten: read again at the next tick
  runner.tick();
  r = runner.reading();
  EXPECT_EQ(r.skipped, 2u);
  EXPECT_EQ(r.cycles, 1u);
  EXPECT_FALSE(r.backing_off);
}

TEST_F(CanaryRunnerPsi, WithoutReadablePressureItNeverBacksOff) {
  CanaryOptions options;
  options.working_set_bytes = 1u << 20;
  options.psi_path = (dir_ / "absent").string();
  CanaryRunner missing(options);
  missing.tick();
  EXPECT_EQ(missing.reading().cycles, 1u);
  std::ofstream(dir_ / "garbage") << "full avg10=lots\n";
  options.psi_path = (dir_ / "garbage").string();
  CanaryRunner garbage(options);
  garbage.tick();
  EXPECT_EQ(garbage.reading().cycles, 1u);
  EXPECT_EQ(garbage.reading().skipped, 0u);
}

TEST(CgroupHeadroom, LimitValues) {
  EXPECT_EQ(parse_cgroup_limit("268435456\n"), 268435456u);
  EXPECT_EQ(parse_cgroup_limit("max\n"), std::nullopt);
  EXPECT_EQ(parse_cgroup_limit("9223372036854771712\n"), std::nullopt);  // v1's unlimited
  EXPECT_EQ(parse_cgroup_limit(""), std::nullopt);
  EXPECT_EQ(parse_cgroup_limit("12 34"), std::nullopt);
  EXPECT_EQ(parse_cgroup_limit("-1"), std::nullopt);
  EXPECT_EQ(parse_cgroup_limit("99999999999999999999999"), std::nullopt);
}

// v2 as a tree of files (this host's cgroup2 mount has no memory controller; the VM stage
// meets the real one): the least headroom on the way up counts, memory.high below memory.max
// is the limit, and the root's files are not read.
TEST_F(CanaryRunnerPsi, HeadroomIsTheLeastOnTheWayUpToTheRoot) {
  const fs::path root = dir_ / "cg";
  const fs::path slice = root / "system.slice";
  const fs::path service = slice / "memdiagd.service";
  fs::create_directories(service);
  std::ofstream(root / "memory.current") << "1000\n";
  std::ofstream(root / "memory.max") << "1000\n";  // a root's files, if any, are not the cgroup's
  std::ofstream(slice / "memory.current") << (900u << 20) << "\n";
  std::ofstream(slice / "memory.high") << "max\n";
  std::ofstream(slice / "memory.max") << (1000u << 20) << "\n";  // 100 MiB left
  std::ofstream(service / "memory.current") << (20u << 20) << "\n";
  std::ofstream(service / "memory.high") << (50u << 20) << "\n";  // 30 MiB left: the least
  std::ofstream(service / "memory.max") << (256u << 20) << "\n";
  EXPECT_EQ(cgroup_headroom(service.string(), root.string(), true), 30u << 20);
  std::ofstream(service / "memory.current") << (60u << 20) << "\n";  // over high: none left
  EXPECT_EQ(cgroup_headroom(service.string(), root.string(), true), 0u);
  std::ofstream(service / "memory.high") << "max\n";
  std::ofstream(service / "memory.max") << "max\n";
  EXPECT_EQ(cgroup_headroom(service.string(), root.string(), true), 100u << 20);  // the slice's
  std::ofstream(slice / "memory.max") << "max\n";
  EXPECT_EQ(cgroup_headroom(service.string(), root.string(), true), std::nullopt);  // no limit at all
  EXPECT_EQ(cgroup_headroom((dir_ / "absent").string(), dir_.string(), true), std::nullopt);
}

// A real v1 memory cgroup: the canary skips its cycle while its cgroup has less than twice the
// working set left below the limit (the cycle would push it into reclaim at its limit), and
// runs again once the limit leaves room.
TEST(CanaryRunnerCgroup, SkipsWhileItsCgroupIsNearItsLimitAndResumesWithRoom) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to create cgroups";
  const std::string root = "/sys/fs/cgroup/memory";
  if (::access((root + "/memory.usage_in_bytes").c_str(), F_OK) != 0) GTEST_SKIP() << "no v1 memory hierarchy";
  const std::string dir = root + "/memdiag-unit-canary-headroom-" + std::to_string(::getpid());
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  struct Remove {
    std::string dir;
    ~Remove() { ::rmdir(dir.c_str()); }
  } remove{dir};
  std::ofstream(dir + "/memory.limit_in_bytes") << (1u << 20) << std::flush;  // nothing used, 1 MiB left
  CanaryOptions options;
  options.working_set_bytes = 1u << 20;
  options.psi_path = "/nonexistent";
  options.cgroup_dir = dir;
  options.cgroup_root = root;
  options.cgroup_v2 = false;
  CanaryRunner runner(options);
  runner.tick();
  CanaryReading r = runner.reading();
  EXPECT_EQ(r.skipped, 1u);
  EXPECT_EQ(r.cycles, 0u);
  EXPECT_TRUE(r.backing_off);
  std::ofstream(dir + "/memory.limit_in_bytes") << (2u << 20) << std::flush;  // twice the working set
  runner.tick();
  r = runner.reading();
  EXPECT_EQ(r.skipped, 1u);
  EXPECT_EQ(r.cycles, 1u);
  EXPECT_FALSE(r.backing_off);
}

TEST(CanaryRunner, ItsThreadRunsCyclesUntilDestroyed) {
  CanaryOptions options;
  options.working_set_bytes = 1u << 20;
  options.interval = std::chrono::milliseconds(20);
  options.psi_path = "/nonexistent";
  CanaryRunner runner(options);
  runner.start();
  // Up to 30 s: a bound for a loaded machine, not the thing tested.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (runner.reading().cycles < 3 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GE(runner.reading().cycles, 3u);
  EXPECT_EQ(runner.allocator_stats().live_bytes, 0u);
}

}  // namespace
}  // namespace memdiag::canary
