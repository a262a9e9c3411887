// SPDX-License-Identifier: Apache-2.0
// ProcessSource on a fixture /proc: the /proc scanner, the selection and its options,
// max_map_count from the tree, a broken sysctl, the daemon itself always selected, and the
// pacing that keeps slow scans to ~1% of a CPU, and scans that block in the kernel (a FIFO
// stands in for a maps file whose process's mmap_lock is held) holding up no sample.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probes/linux/process/process_source.hpp"

namespace memdiag {
namespace {

namespace fs = std::filesystem;

const std::string kTree = MEMDIAG_SOURCE_DIR "/tests/fixtures/kernel-6.18/proc";

ProcessOptions procfs_options() {
  ProcessOptions options;
  options.process_scan = ProcessScanMode::kProcfs;
  return options;
}

const SelectedProcess* find(const ProcessSection& s, int pid) {
  auto it = std::find_if(s.selected.begin(), s.selected.end(), [pid](const SelectedProcess& p) { return p.pid == pid; });
  return it == s.selected.end() ? nullptr : &*it;
}

TEST(ProcessSource, ReadsTheFixtureProcWithItsMaxMapCount) {
  ProcessOptions options = procfs_options();
  options.top_processes = 0;  // only the daemon itself and what is above the threshold
  options.map_areas_threshold = 0.00015;  // 12 of 65530 maps is above, 6 is not
  ProcessSource source(KernelPaths{kTree, "/sys"}, options, {}, /*self_pid=*/1);
  ASSERT_TRUE(source.probe());
  Snapshot snap;
  ASSERT_TRUE(source.sample(snap));
  ASSERT_TRUE(snap.processes);
  const ProcessSection& s = *snap.processes;
  EXPECT_EQ(s.mode, "procfs");
  EXPECT_EQ(s.max_map_count, 65530u);
  EXPECT_EQ(s.processes, 2u);  // kthreadd (pid 2) has no memory of its own
  ASSERT_EQ(s.selected.size(), 2u);
  EXPECT_EQ(find(s, 1)->selected_for, kSelf);
  EXPECT_EQ(find(s, 1)->comm, "systemd");
  EXPECT_EQ(find(s, 1)->map_count, 6u);  // 7 lines, one of them [vsyscall]
  // No mountinfo in the tree, so no memory hierarchy: which line of PID/cgroup would be the
  // memory cgroup is unknown, and the cgroups are left unnamed rather than guessed.
  EXPECT_EQ(find(s, 1)->cgroup, "");
  EXPECT_EQ(find(s, 4242)->selected_for, kAboveThreshold);
  EXPECT_EQ(find(s, 4242)->map_count, 12u);
  EXPECT_EQ(find(s, 4242)->rss_anon_bytes, 800768u * 1024);
  EXPECT_EQ(s.above_threshold, 1u);
  EXPECT_TRUE(s.cgroups.empty());
  EXPECT_EQ(s.unknown_cgroup_processes, 2u);
  EXPECT_EQ(s.malformed, 0u);
  // Without eBPF in procfs mode nothing is missing but the hierarchy, which /proc does not need.
  EXPECT_EQ(source.degraded(), "");
}

TEST(ProcessSource, BrokenMaxMapCountFallsBackToTheKernelDefaultAndSaysSo) {
  const fs::path tmp = fs::temp_directory_path() / ("memdiag-process-source-" + std::to_string(::getpid()));
  fs::remove_all(tmp);
  fs::copy(kTree, tmp, fs::copy_options::recursive);
  std::ofstream(tmp / "sys/vm/max_map_count") << "lots\n";
  ProcessSource source(KernelPaths{tmp.string(), "/sys"}, procfs_options(), {}, 0);
  ASSERT_TRUE(source.probe());
  Snapshot snap;
  ASSERT_TRUE(source.sample(snap));
  EXPECT_EQ(snap.processes->max_map_count, ProcessSource::kDefaultMaxMapCount);
  EXPECT_NE(source.degraded().find("max_map_count"), std::string::npos) << source.degraded();
  fs::remove_all(tmp);
}

TEST(ProcessSource, EbpfOnlyWithoutEbpfIsUnsupportedWithTheReason) {
  ProcessOptions options;
  options.process_scan = ProcessScanMode::kBpfIter;
  ProcessSource built_without(KernelPaths{kTree, "/sys"}, options, {}, 0);
  const Status probed = built_without.probe();
  ASSERT_FALSE(probed);
  EXPECT_NE(probed.error().message.find("without eBPF"), std::string::npos);

  int attempts = 0;
  BpfScannerOpener failing = [&attempts](const std::optional<MemoryHierarchy>&) -> Expected<std::unique_ptr<ProcessScanner>> {
    ++attempts;
    return make_error("no BTF at /nowhere");
  };
  // auto: /proc serves, the reason is in degraded(), and loading is not retried every sample.
  ProcessSource fallback(KernelPaths{kTree, "/sys"}, ProcessOptions{}, failing, 0);
  ASSERT_TRUE(fallback.probe());
  Snapshot snap;
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(fallback.sample(snap));
  EXPECT_EQ(snap.processes->mode, "procfs");
  EXPECT_EQ(attempts, 1);
  EXPECT_NE(fallback.degraded().find("no BTF at /nowhere"), std::string::npos) << fallback.degraded();
}

TEST(ProcessSource, SlowScansArePacedAndTheLastOneServedMeanwhile) {
  ProcessSource source(KernelPaths{kTree, "/sys"}, procfs_options(), {}, 0);
  ASSERT_TRUE(source.probe());
  Snapshot first;
  ASSERT_TRUE(source.sample(first));
  EXPECT_GT(first.processes->scan_seconds, 0);
  EXPECT_GT(first.processes->scan_cpu_seconds, 0);
  // The first scan paces nothing: it pays for what is done once.
  Snapshot second;
  ASSERT_TRUE(source.sample(second));
  EXPECT_GT(second.processes->scanned_at, first.processes->scanned_at) << "the second scan follows the first at once";
  const auto before = std::chrono::steady_clock::now();
  const double scan = second.processes->scan_cpu_seconds;  // what pacing goes by from now on
  EXPECT_GT(scan, 0);
  Snapshot third;
  ASSERT_TRUE(source.sample(third));
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count();
  if (elapsed < scan * ProcessSource::kScanCostFactor) {
    EXPECT_EQ(third.processes->scanned_at, second.processes->scanned_at) << "within the pause: the same scan";
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(scan * ProcessSource::kScanCostFactor + 0.002));
  Snapshot fourth;
  ASSERT_TRUE(source.sample(fourth));
  EXPECT_GT(fourth.processes->scanned_at, second.processes->scanned_at) << "after the pause: a new scan";
  EXPECT_EQ(fourth.processes->processes, first.processes->processes);
}

// A copy of the fixture tree whose pid 4242 maps file can be swapped for a FIFO: opening a FIFO
// for reading blocks until a writer comes, as reading a maps file blocks while its process's
// mmap_lock is held for writing.
class BlockingMapsTree {
 public:
  explicit BlockingMapsTree(const std::string& test)
      : dir_(fs::temp_directory_path() / ("memdiag-blocking-maps-" + test + "-" + std::to_string(::getpid()))) {
    fs::remove_all(dir_);
    fs::copy(kTree, dir_, fs::copy_options::recursive);
    std::ifstream in(maps());
    std::stringstream text;
    text << in.rdbuf();
    content_ = text.str();
  }
  ~BlockingMapsTree() {
    unblock();
    fs::remove_all(dir_);
  }
  std::string root() const { return dir_.string(); }
  std::string maps() const { return (dir_ / "4242" / "maps").string(); }
  void block() {
    fs::remove(maps());
    ASSERT_EQ(::mkfifo(maps().c_str(), 0600), 0);
    blocked_ = true;
  }
  // Feeds the waiting reader the real content, then puts the file back.
  void unblock() {
    if (!blocked_) return;
    blocked_ = false;
    const int fd = ::open(maps().c_str(), O_WRONLY | O_NONBLOCK);  // fails (ENXIO) with no reader
    if (fd >= 0) {
      EXPECT_EQ(::write(fd, content_.data(), content_.size()), static_cast<ssize_t>(content_.size()));
      ::close(fd);
    }
    fs::remove(maps());
    std::ofstream(maps()) << content_;
  }

 private:
  fs::path dir_;
  std::string content_;
  bool blocked_ = false;
};

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

TEST(ProcessSource, AScanBlockedInTheKernelHoldsUpNoSampleAndIsCollectedWhenItFinishes) {
  BlockingMapsTree tree("collected");
  ProcessSource source(KernelPaths{tree.root(), "/sys"}, procfs_options(), {}, 0,
                       ScanWaits{std::chrono::milliseconds(2000), std::chrono::milliseconds(500),
                                 std::chrono::milliseconds(1000)});
  ASSERT_TRUE(source.probe());
  Snapshot first;
  ASSERT_TRUE(source.sample(first));
  ASSERT_EQ(first.processes->processes, 2u);
  EXPECT_EQ(first.processes->scan_in_flight_seconds, 0);

  tree.block();
  std::this_thread::sleep_for(std::chrono::duration<double>(first.processes->scan_cpu_seconds * ProcessSource::kScanCostFactor + 0.005));
  auto t = std::chrono::steady_clock::now();
  Snapshot second;
  ASSERT_TRUE(source.sample(second)) << "the last complete scan is served";
  // Waits `later` (500 ms), not until the scan ends (never, while blocked): the upper bound only
  // has to be finite, so it is loose enough for a loaded machine; the lower one cannot be met early.
  EXPECT_LT(seconds_since(t), 5.0) << "waited for the blocked scan";
  EXPECT_GE(seconds_since(t), 0.45) << "the sample that starts a scan waits for it a while";
  EXPECT_EQ(second.processes->scanned_at, first.processes->scanned_at);
  EXPECT_GE(second.processes->scan_in_flight_seconds, 0.45);
  EXPECT_EQ(source.degraded().find("mmap_lock"), std::string::npos) << "slow is not stuck yet: " << source.degraded();

  t = std::chrono::steady_clock::now();
  Snapshot third;
  ASSERT_TRUE(source.sample(third));
  EXPECT_LT(seconds_since(t), 0.25) << "a scan already overdue is not waited for again (500 ms)";
  EXPECT_GT(third.processes->scan_in_flight_seconds, second.processes->scan_in_flight_seconds);
  std::this_thread::sleep_for(std::chrono::duration<double>(1.05 - third.processes->scan_in_flight_seconds));
  Snapshot fourth;
  ASSERT_TRUE(source.sample(fourth));
  EXPECT_GE(fourth.processes->scan_in_flight_seconds, 1.0);
  EXPECT_NE(source.degraded().find("mmap_lock"), std::string::npos) << "past `stuck`: " << source.degraded();

  tree.unblock();
  Snapshot fresh;
  // Up to 30 s: a bound for a loaded machine, not the thing tested.
  for (auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
       std::chrono::steady_clock::now() < deadline;) {
    ASSERT_TRUE(source.sample(fresh));
    if (fresh.processes->scanned_at > first.processes->scanned_at) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GT(fresh.processes->scanned_at, first.processes->scanned_at) << "the finished scan is collected";
  EXPECT_EQ(fresh.processes->processes, 2u);
  EXPECT_EQ(fresh.processes->scan_in_flight_seconds, 0);
  EXPECT_GT(fresh.processes->scan_seconds, 1.0) << "its wall time includes the wait";
  EXPECT_LT(fresh.processes->scan_cpu_seconds, 0.5) << "its CPU time does not";
  EXPECT_EQ(source.degraded().find("mmap_lock"), std::string::npos) << source.degraded();
  // Paced by CPU: the next scan follows soon, not 100 x the time it was blocked.
  std::this_thread::sleep_for(std::chrono::duration<double>(fresh.processes->scan_cpu_seconds * ProcessSource::kScanCostFactor + 0.01));
  Snapshot next;
  ASSERT_TRUE(source.sample(next));
  EXPECT_GT(next.processes->scanned_at, fresh.processes->scanned_at);
}

TEST(ProcessSource, AFirstScanThatCannotFinishIsAnErrorAndDestructionDoesNotWaitForIt) {
  BlockingMapsTree tree("first");
  tree.block();
  auto source = std::make_unique<ProcessSource>(KernelPaths{tree.root(), "/sys"}, procfs_options(), BpfScannerOpener{}, 0,
                                                ScanWaits{std::chrono::milliseconds(200), std::chrono::milliseconds(50)});
  ASSERT_TRUE(source->probe());
  Snapshot snap;
  auto t = std::chrono::steady_clock::now();
  const Status sampled = source->sample(snap);
  ASSERT_FALSE(sampled);
  EXPECT_NE(sampled.error().message.find("first process scan"), std::string::npos) << sampled.error().message;
  EXPECT_LT(seconds_since(t), 5.0) << "waited 200 ms, not for the blocked scan";
  EXPECT_FALSE(snap.processes);
  t = std::chrono::steady_clock::now();
  source.reset();  // the worker is blocked in open(): left to finish on its own
  EXPECT_LT(seconds_since(t), 1.0) << "waited for the blocked worker";
  tree.unblock();  // it finishes, sees the source gone, and exits
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

}  // namespace
}  // namespace memdiag
