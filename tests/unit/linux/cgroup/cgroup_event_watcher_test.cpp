// The v2 side of CgroupEventWatcher: memory.events watched with inotify. There is no cgroup v2
// memory controller on this machine, so the file is a scratch file rewritten in place, which
// notifies IN_MODIFY as kernfs does when a memory.events counter moves. (The v1 eventfd side
// runs against real cgroups in tests/e2e/test_cgroups.py.)
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

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

}  // namespace
}  // namespace memdiag
