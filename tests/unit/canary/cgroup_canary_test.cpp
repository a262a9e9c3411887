// SPDX-License-Identifier: Apache-2.0
// CgroupCanary against the real kernel: the child (the real memdiagd run as
// --canary-child) joins the cgroup before it runs, its readings come back through the pipe, a
// child that dies is reported with the reason and not restarted before kRestartAfter, and the
// destructor leaves no process behind. Needs root and a v1 memory hierarchy (skipped elsewhere).
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "probes/canary/cgroup_canary.hpp"
#include "tests/support/scratch_memcg.hpp"

namespace memdiag::canary {
namespace {

// How long the tests below poll for a child to cycle, die or restart: a bound for a loaded
// machine (starting the daemon as a child, 50 ms cycles), not the thing tested.
std::chrono::steady_clock::time_point wait_deadline() {
  return std::chrono::steady_clock::now() + std::chrono::seconds(30);
}

std::string memory_cgroup_of_pid(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cgroup");
  for (std::string line; std::getline(in, line);) {
    const auto first = line.find(':');
    const auto second = line.find(':', first + 1);
    if (line.substr(first + 1, second - first - 1) == "memory") return line.substr(second + 1);
  }
  return {};
}

// The pids in a cgroup.procs file.
std::vector<pid_t> tasks_of(const std::string& dir) {
  std::ifstream in(dir + "/cgroup.procs");
  std::vector<pid_t> pids;
  for (pid_t p; in >> p;) pids.push_back(p);
  return pids;
}

class CgroupCanaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root";
    struct stat st {};
    if (::stat((std::string(test_support::kV1MemoryRoot) + "/memory.limit_in_bytes").c_str(), &st) != 0) {
      GTEST_SKIP() << "needs a v1 memory hierarchy";
    }
    name_ = "/memdiag-unit-canary-" + std::to_string(::getpid());
    dir_ = std::string(test_support::kV1MemoryRoot) + name_;
    std::string why;
    ASSERT_TRUE(test_support::create_memcg(dir_.c_str(), 256u << 20, created_, why)) << why;
  }
  void TearDown() override {
    if (created_) test_support::remove_memcg(dir_.c_str(), 50, 100);
  }
  CanaryOptions options() const {
    CanaryOptions o;
    o.working_set_bytes = 1u << 20;
    o.ceiling_bytes = 4u << 20;
    o.interval = std::chrono::milliseconds(50);
    o.psi_path = "/nonexistent";
    return o;
  }
  std::string name_, dir_;
  bool created_ = false;
};

TEST_F(CgroupCanaryTest, RunsInsideTheCgroupAndReportsThroughThePipe) {
  CgroupCanary canary(name_, {dir_}, options(), MEMDIAG_DAEMON_PATH);
  CgroupCanaryReading r = canary.poll();  // starts the child
  for (auto deadline = wait_deadline(); std::chrono::steady_clock::now() < deadline && r.reading.cycles < 3;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    r = canary.poll();
  }
  EXPECT_TRUE(r.running) << r.error;
  EXPECT_EQ(r.cgroup, name_);
  EXPECT_GE(r.reading.cycles, 3u) << r.error;
  EXPECT_EQ(r.reading.failures, 0u);
  EXPECT_GE(r.reading.page_fault.count, 3u * 256);  // 1 MiB of 4 KiB pages per cycle
  const std::vector<pid_t> inside = tasks_of(dir_);
  ASSERT_EQ(inside.size(), 1u) << "the child, alone in the cgroup";
  EXPECT_EQ(memory_cgroup_of_pid(inside[0]), name_);
}

TEST_F(CgroupCanaryTest, ADeadChildIsReportedAndNotRestartedAtOnceAndNothingIsLeftBehind) {
  pid_t child = 0;
  {
    CgroupCanary canary(name_, {dir_}, options(), MEMDIAG_DAEMON_PATH);
    CgroupCanaryReading r = canary.poll();
    for (auto deadline = wait_deadline(); std::chrono::steady_clock::now() < deadline && r.reading.cycles < 1;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      r = canary.poll();
    }
    ASSERT_GE(r.reading.cycles, 1u) << r.error;
    const std::vector<pid_t> inside = tasks_of(dir_);
    ASSERT_EQ(inside.size(), 1u);
    child = inside[0];
    ASSERT_EQ(::kill(child, SIGKILL), 0);
    for (auto deadline = wait_deadline(); std::chrono::steady_clock::now() < deadline && r.running;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      r = canary.poll();
    }
    EXPECT_FALSE(r.running);
    EXPECT_NE(r.error.find("signal 9"), std::string::npos) << r.error;
    EXPECT_GE(r.reading.cycles, 1u) << "the last reading stays";
    // Within kRestartAfter nothing new starts.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_FALSE(canary.poll().running);
    EXPECT_TRUE(tasks_of(dir_).empty());
  }
  // Reaped: no zombie under this pid.
  EXPECT_NE(::kill(child, 0), 0);
}

TEST_F(CgroupCanaryTest, ARestartedChildCarriesOnCountingWhereTheLastOneStopped) {
  CgroupCanary canary(name_, {dir_}, options(), MEMDIAG_DAEMON_PATH, std::chrono::milliseconds(300));
  CgroupCanaryReading r = canary.poll();
  for (auto deadline = wait_deadline(); std::chrono::steady_clock::now() < deadline && r.reading.cycles < 3;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    r = canary.poll();
  }
  ASSERT_GE(r.reading.cycles, 3u) << r.error;
  std::vector<pid_t> inside = tasks_of(dir_);
  ASSERT_EQ(inside.size(), 1u);
  const pid_t first_child = inside[0];
  ASSERT_EQ(::kill(first_child, SIGKILL), 0);
  // Until the second child has run 2 cycles of its own, the counts never go backwards.
  std::uint64_t seen = 0, faults_seen = 0, at_death = 0;
  bool restarted = false;
  for (auto deadline = wait_deadline(); std::chrono::steady_clock::now() < deadline;) {
    r = canary.poll();
    ASSERT_GE(r.reading.cycles, seen);
    ASSERT_GE(r.reading.page_fault.count, faults_seen);
    seen = r.reading.cycles;
    faults_seen = r.reading.page_fault.count;
    // Until the new child shows, the count is the old one's (it may be reaped and replaced
    // within one poll on a slow machine, so "not running" may never be seen).
    inside = tasks_of(dir_);
    if (!restarted) at_death = seen;
    if (r.running && inside.size() == 1 && inside[0] != first_child) restarted = true;
    if (restarted && at_death > 0 && seen >= at_death + 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(restarted) << r.error;
  EXPECT_GE(at_death, 3u);
  EXPECT_GE(seen, at_death + 2) << "the new child's cycles are added to the old one's";
  EXPECT_GE(r.reading.page_fault.count, seen * 256) << "1 MiB of 4 KiB pages per cycle, all children";
}

TEST_F(CgroupCanaryTest, ACgroupThatCannotBeJoinedIsAnError) {
  CgroupCanary canary("/memdiag-no-such-cgroup", {std::string(test_support::kV1MemoryRoot) + "/memdiag-no-such-cgroup"},
                      options(), MEMDIAG_DAEMON_PATH);
  const CgroupCanaryReading r = canary.poll();
  EXPECT_FALSE(r.running);
  EXPECT_NE(r.error.find("cannot join"), std::string::npos) << r.error;
}

}  // namespace
}  // namespace memdiag::canary
