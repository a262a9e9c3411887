// The canary: a cycle really faults its working set in (the previous cycle gave it
// back), the runner backs off while PSI is at the threshold, and a broken or missing PSI file
// never stops it.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "probes/canary/canary_cycle.hpp"
#include "probes/canary/canary_runner.hpp"

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
