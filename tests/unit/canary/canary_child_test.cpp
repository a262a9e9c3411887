// SPDX-License-Identifier: Apache-2.0
// CanaryChild and the canary source's own canary against the real kernel: the child
// is the real memdiagd run as --canary-child (a test binary has no such mode). Without cgroup
// dirs it stays in the parent's memory cgroup; its readings and its allocator's stats come back
// through the pipe, the working set is touched in the child, not here; a restarted child's
// counters carry on; a program that cannot run is an error; nothing is left behind.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "probes/canary/canary_child.hpp"
#include "probes/canary/canary_source.hpp"

namespace memdiag::canary {
namespace {

// How long the tests poll for a child to cycle, die or restart: a bound for a loaded machine
// (starting the daemon as a child, 50 ms cycles), not the thing tested.
std::chrono::steady_clock::time_point wait_deadline() {
  return std::chrono::steady_clock::now() + std::chrono::seconds(30);
}

std::string cgroups_of(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/cgroup");
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A /proc/PID/status field in bytes ("VmHWM"), 0 when absent.
std::uint64_t status_bytes(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field + ":", 0) == 0) return std::stoull(line.substr(field.size() + 1)) * 1024;
  }
  return 0;
}

CanaryOptions small_options() {
  CanaryOptions o;
  o.working_set_bytes = 4u << 20;
  o.ceiling_bytes = 8u << 20;
  o.interval = std::chrono::milliseconds(50);
  o.psi_path = "/nonexistent";  // never backs off
  return o;
}

template <class Poll, class Done>
auto poll_until(Poll poll, Done done) {
  auto s = poll();
  for (auto deadline = wait_deadline(); std::chrono::steady_clock::now() < deadline && !done(s);) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    s = poll();
  }
  return s;
}

TEST(CanaryChild, StaysInTheParentsCgroupAndSendsItsReadingAndAllocatorStats) {
  CanaryChild child(small_options(), MEMDIAG_DAEMON_PATH);
  const CanaryChildStatus s = poll_until([&] { return child.poll(); },
                                         [](const CanaryChildStatus& s) { return s.report.reading.cycles >= 3; });
  ASSERT_TRUE(s.running) << s.error;
  ASSERT_GE(s.report.reading.cycles, 3u) << s.error;
  EXPECT_TRUE(s.reported);
  EXPECT_TRUE(s.error.empty()) << s.error;
  EXPECT_EQ(s.report.reading.failures, 0u);
  EXPECT_GE(s.report.reading.page_fault.count, s.report.reading.cycles * 1024) << "4 MiB of 4 KiB pages per cycle";
  // The allocator's stats are the child's: every cycle gave its working set back.
  EXPECT_GE(s.report.allocator.released_bytes_total, s.report.reading.cycles * (4u << 20));
  EXPECT_GT(s.report.allocator.reserved_bytes, 0u);
  EXPECT_LE(s.report.allocator.held_bytes, 4u << 20);
  // Its memory cgroup (every hierarchy) is this process's: it joined none.
  EXPECT_EQ(cgroups_of(std::to_string(s.pid)), cgroups_of("self"));
  // The working set was touched there, not here.
  EXPECT_GE(status_bytes(s.pid, "VmHWM"), 4u << 20);
  std::ifstream comm("/proc/" + std::to_string(s.pid) + "/comm");
  std::string name;
  std::getline(comm, name);
  EXPECT_EQ(name, "memdiag-canary");
}

TEST(CanaryChild, ARestartedChildsReadingAndAllocatorCountersNeverGoBackwards) {
  CanaryChild child(small_options(), MEMDIAG_DAEMON_PATH, {}, std::chrono::milliseconds(300));
  CanaryChildStatus s = poll_until([&] { return child.poll(); },
                                   [](const CanaryChildStatus& s) { return s.report.reading.cycles >= 3; });
  ASSERT_GE(s.report.reading.cycles, 3u) << s.error;
  const pid_t first = s.pid;
  ASSERT_EQ(::kill(first, SIGKILL), 0);
  std::uint64_t cycles = 0, released = 0, at_death = 0, released_at_death = 0;
  bool restarted = false, seen_dead = false;
  for (auto deadline = wait_deadline(); std::chrono::steady_clock::now() < deadline;) {
    s = child.poll();
    ASSERT_GE(s.report.reading.cycles, cycles);
    ASSERT_GE(s.report.allocator.released_bytes_total, released);
    cycles = s.report.reading.cycles;
    released = s.report.allocator.released_bytes_total;
    if (!s.running) {
      seen_dead = true;
      EXPECT_NE(s.error.find("signal 9"), std::string::npos) << s.error;
      EXPECT_EQ(s.report.allocator.held_bytes + s.report.allocator.reserved_bytes, 0u) << "no child holds anything";
    }
    if (!restarted) {
      at_death = cycles;
      released_at_death = released;
    }
    if (s.running && s.pid != first) restarted = true;
    if (restarted && cycles >= at_death + 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(restarted) << s.error;
  EXPECT_TRUE(s.error.empty()) << "a running child clears the reason: " << s.error;
  EXPECT_GE(cycles, at_death + 2) << "the new child's cycles are added to the old one's";
  EXPECT_GE(released, released_at_death + 2 * (4u << 20)) << "and its allocator's released bytes";
  (void)seen_dead;  // on a slow machine the new child may start within the poll that reaps the old
}

TEST(CanaryChild, AProgramThatCannotRunIsAnErrorAndNothingIsLeftBehind) {
  pid_t pid = -1;
  {
    CanaryChild child(small_options(), "/nonexistent/memdiagd");
    const CanaryChildStatus s = poll_until([&] { return child.poll(); },
                                           [](const CanaryChildStatus& s) { return !s.running; });
    EXPECT_FALSE(s.running);
    EXPECT_NE(s.error.find("could not run /nonexistent/memdiagd"), std::string::npos) << s.error;
  }
  {
    CanaryChild child(small_options(), MEMDIAG_DAEMON_PATH);
    pid = child.poll().pid;
    ASSERT_GT(pid, 0);
  }
  EXPECT_NE(::kill(pid, 0), 0) << "killed and reaped: not even a zombie";
}

TEST(CanarySource, RunsTheDaemonsCanaryInAChildAndSaysWhenItDied) {
  CanarySettings settings;
  settings.interval = std::chrono::milliseconds(50);
  settings.working_set_bytes = 4u << 20;
  settings.ceiling_bytes = 8u << 20;
  settings.backoff_psi_full = 100;
  settings.restart_after = std::chrono::hours(1);  // no restart within this test
  CanarySource source(KernelPaths{}, settings, MEMDIAG_DAEMON_PATH);
  ASSERT_TRUE(source.probe());
  Snapshot snap;
  auto sample = [&] {
    snap = Snapshot{};
    EXPECT_TRUE(source.sample(snap));
    return *snap.canary;
  };
  CanarySection c = poll_until(sample, [](const CanarySection& c) { return c.node.cycles >= 2; });
  ASSERT_GE(c.node.cycles, 2u) << source.degraded();
  EXPECT_TRUE(c.node_running);
  EXPECT_GE(c.allocator.released_bytes_total, c.node.cycles * (4u << 20));
  EXPECT_EQ(source.degraded(), "");
  const pid_t child = source.node_child_pid();
  ASSERT_GT(child, 0);
  EXPECT_NE(child, ::getpid());
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  c = poll_until(sample, [](const CanarySection& c) { return !c.node_running; });
  EXPECT_FALSE(c.node_running);
  EXPECT_GE(c.node.cycles, 2u) << "the dead child's counts stay";
  EXPECT_EQ(source.degraded(), "the daemon's canary: canary child killed by signal 9");
}

TEST(CanarySource, AProgramWithoutTheChildModeCannotRunIt) {
  CanarySource source(KernelPaths{}, CanarySettings{}, "");
  const Status st = source.probe();
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("--canary-child"), std::string::npos) << st.error().message;
}

}  // namespace
}  // namespace memdiag::canary
