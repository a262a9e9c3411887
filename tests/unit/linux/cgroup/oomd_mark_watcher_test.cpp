// SPDX-License-Identifier: Apache-2.0
// The userspace OOM killers' marks caught as they are written, on real cgroup directories: a
// kill is recorded even when its cgroup is removed right after (as systemd removes a killed
// transient unit's), marks made before watching are not kills, and newer oomd's two marks of
// one kill are one oomd kill.
#include "probes/linux/cgroup/oomd_mark_watcher.hpp"

#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cerrno>
#include <cstring>
#include <string>
#include <thread>

namespace memdiag {
namespace {

using namespace std::chrono_literals;

class OomdMarkWatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to create cgroups and set trusted.* attributes";
    if (::access("/sys/fs/cgroup/memory/memory.usage_in_bytes", F_OK) != 0) {
      GTEST_SKIP() << "no cgroup v1 memory hierarchy at /sys/fs/cgroup/memory";
    }
    root_ = "/sys/fs/cgroup/memory/memdiag-unit-oomdwatch-" + std::to_string(::getpid());
    ASSERT_EQ(::mkdir(root_.c_str(), 0755), 0) << root_;
  }
  void TearDown() override {
    if (root_.empty()) return;
    for (const char* child : {"/killed", "/old", "/both"}) ::rmdir((root_ + child).c_str());
    ::rmdir(root_.c_str());
  }
  void mark(const std::string& path, const char* name, const char* value) {
    ASSERT_EQ(::setxattr((root_ + path).c_str(), name, value, std::strlen(value), 0), 0) << std::strerror(errno);
  }
  // Waits for the watcher's thread to have recorded `n` kills.
  std::vector<UserspaceOomKill> wait_for(const OomdMarkWatcher& w, std::size_t n) {
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (w.recent().size() < n && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
    return w.recent();
  }
  std::string root_;
};

TEST_F(OomdMarkWatcherTest, AKillIsRecordedThoughItsCgroupIsRemovedAtOnce) {
  ASSERT_EQ(::mkdir((root_ + "/killed").c_str(), 0755), 0);
  OomdMarkWatcher watcher;
  watcher.watch(root_, {"/", "/killed"});
  ASSERT_TRUE(watcher.working()) << watcher.unwatchable_reason();
  EXPECT_EQ(watcher.watched(), 2u);
  EXPECT_TRUE(watcher.recent().empty());

  // systemd-oomd's order: oomd_ooms before the kill, oomd_kill with the processes after, and
  // the cgroup goes as soon as systemd has seen them exit and stopped the unit: milliseconds
  // later, where the next sample comes up to a second later.
  mark("/killed", "user.oomd_ooms", "1");
  mark("/killed", "user.oomd_kill", "3");
  std::this_thread::sleep_for(5ms);
  ASSERT_EQ(::rmdir((root_ + "/killed").c_str()), 0);

  // One record, or two when the thread read between the marks: three processes either way.
  auto kills = wait_for(watcher, 1);
  std::this_thread::sleep_for(20ms);
  kills = watcher.recent();
  ASSERT_FALSE(kills.empty());
  std::uint64_t killed = 0;
  for (std::size_t i = 0; i < kills.size(); ++i) {
    EXPECT_EQ(kills[i].cgroup, "/killed");
    EXPECT_EQ(kills[i].sequence, i + 1);
    EXPECT_FALSE(kills[i].trusted);
    killed += kills[i].count;
  }
  EXPECT_EQ(killed, 3u);
  // The source walks the tree again after a removal and gives the watcher the new list: the
  // removed cgroup's watch goes, its kills stay.
  watcher.watch(root_, {"/"});
  EXPECT_EQ(watcher.watched(), 1u);
  EXPECT_EQ(watcher.recent().size(), kills.size());
}

TEST_F(OomdMarkWatcherTest, MarksFromBeforeWatchingAreNoKillsAndOomdsTwoMarksAreOneKill) {
  ASSERT_EQ(::mkdir((root_ + "/old").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((root_ + "/both").c_str(), 0755), 0);
  mark("/old", "user.oomd_kill", "5");
  OomdMarkWatcher watcher;
  watcher.watch(root_, {"/old", "/both"});
  ASSERT_TRUE(watcher.working()) << watcher.unwatchable_reason();
  mark("/old", "user.oomd_kill", "6");  // one more since
  auto kills = wait_for(watcher, 1);
  ASSERT_EQ(kills.size(), 1u);
  EXPECT_EQ(kills[0].cgroup, "/old");
  EXPECT_EQ(kills[0].count, 1u);

  // Newer oomd writes user.* and trusted.*: one kill, oomd's.
  mark("/both", "user.oomd_kill", "1");
  wait_for(watcher, 2);
  mark("/both", "trusted.oomd_kill", "1");
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!watcher.recent().back().trusted && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  kills = watcher.recent();
  ASSERT_EQ(kills.size(), 2u);
  EXPECT_EQ(kills[1].cgroup, "/both");
  EXPECT_TRUE(kills[1].trusted);
  EXPECT_EQ(kills[1].count, 1u);

  // Dropped from the watched set: its marks are not followed any more.
  watcher.watch(root_, {"/both"});
  EXPECT_EQ(watcher.watched(), 1u);
  mark("/old", "user.oomd_kill", "9");
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(watcher.recent().size(), 2u);
}

}  // namespace
}  // namespace memdiag
