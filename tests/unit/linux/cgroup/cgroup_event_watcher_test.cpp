// SPDX-License-Identifier: Apache-2.0
// The v2 side of CgroupEventWatcher: memory.events watched with inotify. There is no cgroup v2
// memory controller on this machine, so the file is a scratch file rewritten in place, which
// notifies IN_MODIFY as kernfs does when a memory.events counter moves. The v1 eventfd side
// runs against real cgroups here (the node-wide OOM total: as root, each OOM in a 32 MiB cgroup,
// under flock /tmp/memdiag-tests.lock) and in tests/e2e/test_cgroups.py.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "probes/linux/cgroup/cgroup_event_watcher.hpp"

namespace memdiag {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class ScratchCgroup {
 public:
  ScratchCgroup() {
    char tmpl[] = "/tmp/memdiag-events-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    write_events(0, 0);
  }
  ~ScratchCgroup() { fs::remove_all(dir_); }
  const std::string& dir() const { return dir_; }
  void write_events(int oom, int oom_kill) const {
    std::ofstream(dir_ + "/memory.events", std::ios::trunc)
        << "low 0\nhigh 3\nmax 7\noom " << oom << "\noom_kill " << oom_kill << "\noom_group_kill 0\n";
  }

 private:
  std::string dir_;
};

// Waits for the watcher's oom count of `dir` to reach `want` (up to 30 s: a bound for a loaded
// machine, not the thing tested); returns the last one.
std::uint64_t wait_for_oom(const CgroupEventWatcher& watcher, const std::string& dir, std::uint64_t want) {
  std::uint64_t last = 0;
  for (auto deadline = std::chrono::steady_clock::now() + 30s; std::chrono::steady_clock::now() < deadline;) {
    auto counts = watcher.counts(dir);
    if (counts) last = counts->oom;
    if (last >= want) return last;
    std::this_thread::sleep_for(5ms);
  }
  return last;
}

TEST(CgroupEventWatcherV2, CountsOomIncrementsFromWhenWatched) {
  ScratchCgroup cgroup;
  cgroup.write_events(4, 4);  // before watching: not counted
  CgroupEventWatcher watcher(CgroupEventWatcher::Kind::kV2Inotify, 20ms);
  watcher.watch({cgroup.dir()});
  ASSERT_EQ(watcher.watched(), 1u);
  auto counts = watcher.counts(cgroup.dir());
  ASSERT_TRUE(counts.has_value());
  EXPECT_EQ(counts->oom, 0u);
  EXPECT_FALSE(counts->has_pressure_levels);

  cgroup.write_events(5, 5);
  EXPECT_EQ(wait_for_oom(watcher, cgroup.dir(), 1), 1u);
  cgroup.write_events(8, 6);
  EXPECT_EQ(wait_for_oom(watcher, cgroup.dir(), 4), 4u);
  // Nothing more happens without a change.
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(watcher.counts(cgroup.dir())->oom, 4u);
}

TEST(CgroupEventWatcherV2, ABurstIsCoalescedWithoutLosingCounts) {
  ScratchCgroup cgroup;
  CgroupEventWatcher watcher(CgroupEventWatcher::Kind::kV2Inotify, 200ms);
  watcher.watch({cgroup.dir()});
  // 500 rewrites within a few milliseconds, as an OOM loop would move the counters: the count
  // ends at the final value whichever of them the debounced reads saw.
  for (int i = 1; i <= 500; ++i) cgroup.write_events(i, i);
  EXPECT_EQ(wait_for_oom(watcher, cgroup.dir(), 500), 500u);
}

TEST(CgroupEventWatcherV2, ACgroupMadeAgainUnderTheSameNameIsWatchedAgain) {
  ScratchCgroup cgroup;
  CgroupEventWatcher watcher(CgroupEventWatcher::Kind::kV2Inotify, 20ms);
  watcher.watch({cgroup.dir()});
  cgroup.write_events(1, 1);
  EXPECT_EQ(wait_for_oom(watcher, cgroup.dir(), 1), 1u);
  // The cgroup is removed and made again (a restarted service): a new memory.events file.
  fs::remove(cgroup.dir() + "/memory.events");
  cgroup.write_events(0, 0);
  // The next samples call watch() again; once the watcher thread has seen IN_IGNORED, one of
  // them registers the new file, whose counts start from zero (the old registration had 1).
  bool registered_again = false;
  for (auto deadline = std::chrono::steady_clock::now() + 30s;
       !registered_again && std::chrono::steady_clock::now() < deadline;) {
    watcher.watch({cgroup.dir()});
    auto counts = watcher.counts(cgroup.dir());
    registered_again = counts && counts->oom == 0;
    if (!registered_again) std::this_thread::sleep_for(5ms);
  }
  ASSERT_TRUE(registered_again) << "the new memory.events was not registered";
  ASSERT_EQ(watcher.watched(), 1u);
  cgroup.write_events(3, 3);
  EXPECT_EQ(wait_for_oom(watcher, cgroup.dir(), 3), 3u);  // counted from the new file's baseline
}

TEST(CgroupEventWatcherV2, UnwatchedAndUnreadableCgroups) {
  ScratchCgroup cgroup;
  CgroupEventWatcher watcher(CgroupEventWatcher::Kind::kV2Inotify, 20ms);
  watcher.watch({cgroup.dir(), "/nonexistent/cgroup"});
  EXPECT_EQ(watcher.watched(), 1u);  // the missing one is not watched
  EXPECT_FALSE(watcher.counts("/nonexistent/cgroup").has_value());
  watcher.watch({});
  EXPECT_EQ(watcher.watched(), 0u);
  EXPECT_FALSE(watcher.counts(cgroup.dir()).has_value());
  // A garbage memory.events is no registration either.
  std::ofstream(cgroup.dir() + "/memory.events", std::ios::trunc) << "oom lots\n";
  watcher.watch({cgroup.dir()});
  EXPECT_EQ(watcher.watched(), 0u);
}

// Why a cgroup could not be watched is said without its path (one text for all of them, logged
// once); a cgroup removed since it was listed is no reason.
TEST(CgroupEventWatcherV2, SaysWhyACgroupCannotBeWatched) {
  ScratchCgroup cgroup;
  CgroupEventWatcher watcher(CgroupEventWatcher::Kind::kV2Inotify, 20ms);
  watcher.watch({cgroup.dir(), "/nonexistent/cgroup"});
  EXPECT_EQ(watcher.unwatchable_reason(), "");
  std::ofstream(cgroup.dir() + "/memory.events", std::ios::trunc) << "oom lots\n";
  watcher.watch({});
  watcher.watch({cgroup.dir()});
  EXPECT_EQ(watcher.unwatchable_reason(), "memory.events has no readable oom counter");
  cgroup.write_events(0, 0);  // the next watch() tries again, and the reason goes
  watcher.watch({cgroup.dir()});
  EXPECT_EQ(watcher.watched(), 1u);
  EXPECT_EQ(watcher.unwatchable_reason(), "");
}

// The v2 root has no memory.events (nothing limits it), nor has a cgroup whose parent does not
// enable the memory controller: nothing to watch there, and no reason to say the source is
// degraded (Debian 12's own kernel said so at every start).
TEST(CgroupEventWatcherV2, ACgroupWithoutMemoryEventsIsNotWatchedAndNoReason) {
  ScratchCgroup root;
  fs::remove(root.dir() + "/memory.events");
  fs::create_directory(root.dir() + "/child");
  std::ofstream(root.dir() + "/child/memory.events") << "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n";
  CgroupEventWatcher watcher(CgroupEventWatcher::Kind::kV2Inotify, 20ms);
  watcher.watch({root.dir(), root.dir() + "/child"});
  EXPECT_EQ(watcher.watched(), 1u);
  EXPECT_FALSE(watcher.counts(root.dir()).has_value());
  EXPECT_TRUE(watcher.counts(root.dir() + "/child").has_value());
  EXPECT_EQ(watcher.unwatchable_reason(), "");
}

// v1 registration goes through cgroup.event_control: a directory with memory.pressure_level but
// without it (as a non-memory v1 cgroup, or a file the daemon may not write) says so.
TEST(CgroupEventWatcherV1, SaysWhyACgroupCannotBeWatched) {
  ScratchCgroup cgroup;
  std::ofstream(cgroup.dir() + "/memory.pressure_level") << "";
  CgroupEventWatcher watcher(CgroupEventWatcher::Kind::kV1Eventfd, 20ms);
  watcher.watch({cgroup.dir(), "/nonexistent/cgroup"});
  EXPECT_EQ(watcher.watched(), 0u);
  EXPECT_EQ(watcher.unwatchable_reason(), "cgroup.event_control: No such file or directory");
  fs::remove(cgroup.dir() + "/memory.pressure_level");
  watcher.watch({cgroup.dir()});
  EXPECT_EQ(watcher.unwatchable_reason(), "memory.pressure_level: No such file or directory");
  watcher.watch({"/nonexistent/cgroup"});
  EXPECT_EQ(watcher.unwatchable_reason(), "");
}

// The whole file in one write at offset 0, as kernfs presents it (no empty file in between).
void put_events(const std::string& dir, int oom) {
  const std::string text = "low 0\nhigh 0\nmax 0\noom " + std::to_string(oom) + "\noom_kill 0\noom_group_kill 0\n";
  const int fd = ::open((dir + "/memory.events").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(::pwrite(fd, text.data(), text.size(), 0), static_cast<ssize_t>(text.size()));
  ::close(fd);
}

// v2 memory.events is hierarchical: an OOM in parent/child moves "oom" of both. Both watched,
// the node-wide total counts it once.
TEST(CgroupEventWatcherV2, AnOomInANestedCgroupIsCountedOnce) {
  ScratchCgroup parent;
  const std::string child = parent.dir() + "/child";
  fs::create_directory(child);
  put_events(child, 0);
  CgroupEventWatcher watcher(CgroupEventWatcher::Kind::kV2Inotify, 20ms);
  watcher.watch({parent.dir(), child});
  ASSERT_EQ(watcher.watched(), 2u);
  put_events(child, 1);
  put_events(parent.dir(), 1);
  EXPECT_EQ(wait_for_oom(watcher, child, 1), 1u);
  EXPECT_EQ(wait_for_oom(watcher, parent.dir(), 1), 1u);
  EXPECT_EQ(watcher.oom_total(), 1u);
}

// The second OOM of a storm comes within the debounce interval, so the child's memory.events is
// not read at once, and the child is removed before it would be: the parent's hierarchical count,
// which the kernel keeps, still brings it into the total.
TEST(CgroupEventWatcherV2, AnOomOfACgroupRemovedRightAfterItIsCounted) {
  ScratchCgroup parent;
  const std::string child = parent.dir() + "/child";
  fs::create_directory(child);
  put_events(child, 0);
  CgroupEventWatcher watcher(CgroupEventWatcher::Kind::kV2Inotify, 500ms);
  watcher.watch({parent.dir(), child});
  put_events(child, 1);
  put_events(parent.dir(), 1);
  ASSERT_EQ(wait_for_oom(watcher, child, 1), 1u);
  ASSERT_EQ(wait_for_oom(watcher, parent.dir(), 1), 1u);
  put_events(child, 2);
  put_events(parent.dir(), 2);
  fs::remove_all(child);
  EXPECT_EQ(wait_for_oom(watcher, parent.dir(), 2), 2u);
  watcher.watch({parent.dir()});
  EXPECT_EQ(watcher.oom_total(), 2u);
}

// v1, real cgroups: an OOM in parent (its limit reached by a task of child) is notified to parent
// and child (mem_cgroup_oom_notify walks the subtree); the total counts it once. Needs root and
// the v1 memory controller; run under flock /tmp/memdiag-tests.lock.
TEST(CgroupEventWatcherV1, AnOomNotifiedToACgroupAndItsDescendantIsCountedOnce) {
  const std::string root = "/sys/fs/cgroup/memory";
  if (::geteuid() != 0 || !fs::exists(root + "/cgroup.event_control")) GTEST_SKIP() << "needs root and cgroup v1 memory";
  const std::string parent = root + "/memdiag-oomfix-" + std::to_string(::getpid());
  const std::string child = parent + "/child";
  ASSERT_TRUE(fs::create_directory(parent));
  ASSERT_TRUE(fs::create_directory(child));
  std::ofstream(parent + "/memory.limit_in_bytes") << (32 << 20) << std::endl;
  {
    CgroupEventWatcher watcher(CgroupEventWatcher::Kind::kV1Eventfd, 20ms);
    watcher.watch({parent, child});
    ASSERT_EQ(watcher.watched(), 2u);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      std::ofstream(child + "/cgroup.procs") << ::getpid() << std::endl;
      const std::size_t size = 256u << 20;
      auto* p = static_cast<char*>(::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
      for (std::size_t i = 0; p != MAP_FAILED && i < size; i += 4096) p[i] = 1;
      ::_exit(0);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the OOM killer should have killed it";
    EXPECT_EQ(wait_for_oom(watcher, child, 1), 1u);
    EXPECT_EQ(wait_for_oom(watcher, parent, 1), 1u);
    std::this_thread::sleep_for(200ms);  // any further notification would have arrived
    // Usually one OOM; the kernel may enter the memcg OOM path again while the victim exits
    // (seen once: 2, each notified to both cgroups). Either way each is counted once, not once
    // per cgroup it was notified to.
    const std::uint64_t ooms = watcher.counts(child)->oom;
    EXPECT_GE(ooms, 1u);
    EXPECT_LE(ooms, 3u);
    EXPECT_EQ(watcher.counts(parent)->oom, ooms);
    EXPECT_EQ(watcher.oom_total(), ooms);
  }
  fs::remove(child);
  fs::remove(parent);
}

// v1: rmdir signals the eventfds once more. An OOM read in the same value as that signal, the
// directory already gone, is still counted; the removal's own signal is not.
TEST(CgroupEventWatcherV1, AnOomReadAfterItsCgroupIsRemovedIsCounted) {
  const std::string root = "/sys/fs/cgroup/memory";
  if (::geteuid() != 0 || !fs::exists(root + "/cgroup.event_control")) GTEST_SKIP() << "needs root and cgroup v1 memory";
  const std::string dir = root + "/memdiag-oomfix-rm-" + std::to_string(::getpid());
  ASSERT_TRUE(fs::create_directory(dir));
  std::ofstream(dir + "/memory.limit_in_bytes") << (32 << 20) << std::endl;
  // A long debounce: the OOM is read once, at the leading edge; the next OOM waits for it. Long
  // enough that the second OOM (a fork, 32 MiB touched) is surely within it on a loaded machine:
  // at 2 s it once was not, and the second OOM was read before the removal.
  CgroupEventWatcher watcher(CgroupEventWatcher::Kind::kV1Eventfd, 8000ms);
  watcher.watch({dir});
  auto oom_once = [&] {
    const pid_t pid = ::fork();
    if (pid == 0) {
      std::ofstream(dir + "/cgroup.procs") << ::getpid() << std::endl;
      const std::size_t size = 256u << 20;
      auto* p = static_cast<char*>(::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
      for (std::size_t i = 0; p != MAP_FAILED && i < size; i += 4096) p[i] = 1;
      ::_exit(0);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
  };
  oom_once();
  ASSERT_EQ(wait_for_oom(watcher, dir, 1), 1u);
  oom_once();  // within the debounce: its eventfd is not read yet
  ASSERT_EQ(watcher.counts(dir)->oom, 1u);
  fs::remove(dir);  // the removal's signal adds to the same eventfd
  EXPECT_EQ(wait_for_oom(watcher, dir, 2), 2u);  // read when the debounce ends
  std::this_thread::sleep_for(100ms);             // and the removal's own signal taken off
  EXPECT_EQ(watcher.counts(dir)->oom, 2u);
  EXPECT_EQ(watcher.oom_total(), 2u);
}

}  // namespace
}  // namespace memdiag
