// SPDX-License-Identifier: Apache-2.0
// docs/sources.md: "v2 increments of memory.events `oom` seen through inotify, so an OOM is counted even
// when its cgroup is removed before the next sample". The cgroup source on a scratch copy of the
// cgroup v2 fixture tree (this machine's memory controller is v1): a watched cgroup's
// memory.events moves, and its parent's with it (the counter is hierarchical), the cgroup is
// removed, and the next sample still counts the OOM, once, in
// memdiag_cgroups_oom_notifications_total although the cgroup and its own series are gone.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/inotify.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "exporters/prometheus/snapshot_collector.hpp"
#include "probes/catalog/source_catalog.hpp"
#include "probes/core/snapshot_store.hpp"
#include "probes/linux/cgroup/cgroup_options.hpp"

namespace memdiag {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

const std::string kFixture = MEMDIAG_SOURCE_DIR "/tests/fixtures/cgroup-v2";

class ScratchV2Tree {
 public:
  ScratchV2Tree() {
    char tmpl[] = "/tmp/memdiag-v2-oom-XXXXXX";
    root_ = ::mkdtemp(tmpl);
    fs::copy(kFixture, root_, fs::copy_options::recursive);
  }
  ~ScratchV2Tree() { fs::remove_all(root_); }
  KernelPaths paths() const { return {root_ + "/proc", root_ + "/sys"}; }
  std::string cgroup(const std::string& path) const { return root_ + "/sys/fs/cgroup" + path; }

 private:
  std::string root_;
};

// The whole file in one write at offset 0 (no truncation first, the same length every time),
// so a reader woken by the modification sees all of it, as it does kernfs' generated file.
void write_events(const std::string& dir, int oom, int oom_kill) {
  const std::string text = "low 0\nhigh 0\nmax 12\noom " + std::to_string(oom) + "\noom_kill " +
                           std::to_string(oom_kill) + "\noom_group_kill 0\n";
  const int fd = ::open((dir + "/memory.events").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(::pwrite(fd, text.data(), text.size(), 0), static_cast<ssize_t>(text.size()));
  ::close(fd);
}

std::string render(const CgroupSection& section) {
  auto snapshot = std::make_shared<Snapshot>();
  snapshot->cgroups = section;
  SnapshotStore store(1);
  store.publish(snapshot);
  prom::SnapshotCollector collector(store, {});
  std::string text;
  collector.render_text(text);
  return text;
}

TEST(CgroupSourceV2, AnOomIsCountedWhenItsCgroupIsRemovedBeforeTheNextSample) {
  ScratchV2Tree tree;
  const std::string doomed = tree.cgroup("/system.slice/doomed.service");
  fs::copy(tree.cgroup("/system.slice/containerd.service"), doomed);
  fs::remove(doomed + "/memory.events");
  write_events(doomed, 0, 0);
  CgroupOptions options;
  options.max_watched_cgroups = 1000;
  auto source = make_source("cgroup", tree.paths(), options);
  ASSERT_TRUE(source->probe());
  Snapshot first;
  ASSERT_TRUE(source->sample(first));
  bool watched = false;
  for (const auto& c : first.cgroups->cgroups) watched |= c.path == "/system.slice/doomed.service" && c.notifications;
  ASSERT_TRUE(watched) << "the cgroup must be watched for its OOM to be seen";
  ASSERT_EQ(first.cgroups->oom_notifications, 0u);

  // The OOM: memory.events of the cgroup and of its ancestor system.slice move (the kernel
  // notifies IN_MODIFY, as these writes do). The cgroup is removed at once, perhaps before the
  // watcher read its file: the total counts the OOM through system.slice, the top-most watched
  // cgroup, whose count the kernel keeps. The test waits until the watcher has read that file
  // (its close after reading).
  const std::string slice = tree.cgroup("/system.slice");
  const int inotify = ::inotify_init1(IN_CLOEXEC);
  ASSERT_GE(inotify, 0);
  ASSERT_GE(::inotify_add_watch(inotify, (slice + "/memory.events").c_str(), IN_CLOSE_NOWRITE), 0);
  write_events(doomed, 1, 1);
  fs::remove_all(doomed);  // removed before the next sample
  write_events(slice, 1, 1);
  pollfd pfd{inotify, POLLIN, 0};
  ASSERT_EQ(::poll(&pfd, 1, 10000), 1) << "the watcher did not read memory.events within 10 s";
  ::close(inotify);

  Snapshot second;
  ASSERT_TRUE(source->sample(second));
  for (const auto& c : second.cgroups->cgroups) EXPECT_NE(c.path, "/system.slice/doomed.service");
  EXPECT_EQ(second.cgroups->oom_notifications, 1u);
  const std::string text = render(*second.cgroups);
  EXPECT_NE(text.find("\nmemdiag_cgroups_oom_notifications_total 1\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("doomed"), std::string::npos);

  // It stays counted: a counter of the node, not of the cgroup.
  Snapshot third;
  ASSERT_TRUE(source->sample(third));
  EXPECT_EQ(third.cgroups->oom_notifications, 1u);
}

}  // namespace
}  // namespace memdiag
