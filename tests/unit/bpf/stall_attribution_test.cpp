// SPDX-License-Identifier: Apache-2.0
// What the reclaim-stall source makes of the probe's reading, without loading BPF: cgroup ids
// named by real directories (a scratch tree whose inode numbers are the ids, as the memory
// hierarchy's are), the cap and memdiag_reclaim_stall_cgroups_dropped, a removed cgroup kept
// for retain_removed and then folded into the node totals, on a clock the test moves. And the
// source's "load retried at most once a minute", on the same kind of clock.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "exporters/prometheus/snapshot_collector.hpp"
#include "probes/bpf/reclaim_stall_source.hpp"
#include "probes/bpf/stall_attribution.hpp"
#include "probes/core/snapshot_store.hpp"

namespace memdiag {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using TimePoint = std::chrono::steady_clock::time_point;

constexpr auto kDirect = StallKind::kDirect;
constexpr auto kMemcg = StallKind::kMemcg;

class ScratchTree {
 public:
  ScratchTree() {
    char tmpl[] = "/tmp/memdiag-stall-names-XXXXXX";
    root_ = ::mkdtemp(tmpl);
  }
  ~ScratchTree() { fs::remove_all(root_); }
  const std::string& root() const { return root_; }
  std::uint64_t make(const std::string& path) const {
    fs::create_directories(root_ + path);
    return id(path);
  }
  std::uint64_t id(const std::string& path) const {
    struct stat st{};
    EXPECT_EQ(::stat((path == "/" ? root_ : root_ + path).c_str(), &st), 0) << path;
    return st.st_ino;
  }
  void remove(const std::string& path) const { fs::remove(root_ + path); }

 private:
  std::string root_;
};

// `count` stalls of `each_ns` in the slot that holds them.
StallHistogram stalls(StallKind kind, std::uint64_t id, std::uint64_t count, std::uint64_t each_ns) {
  StallHistogram h;
  h.kind = kind;
  h.memcg_id = id;
  h.buckets[log2_slot(each_ns)] = count;
  h.count = count;
  h.sum_ns = count * each_ns;
  return h;
}

// The kernel maps as the probe would hold them: forget() deletes an id, unless told to fail.
struct KernelMaps {
  ReclaimStallReading reading;
  std::vector<std::uint64_t> forgotten;
  bool fail_histograms = false;

  // What ReclaimStallProbe::read() returns: a copy, which forget() does not change.
  ReclaimStallReading read() const { return reading; }

  StallAttribution::Forget forget() {
    return [this](std::uint64_t id) {
      forgotten.push_back(id);
      ReclaimStallProbe::Forgotten gone;
      gone.histograms.fill(!fail_histograms);
      gone.oom_victims = true;
      if (fail_histograms) {
        gone.error = "scripted failure";
      } else {
        auto& h = reading.histograms;
        h.erase(std::remove_if(h.begin(), h.end(), [id](const StallHistogram& x) { return x.memcg_id == id; }), h.end());
      }
      auto& v = reading.oom_victims;
      v.erase(std::remove_if(v.begin(), v.end(), [id](const OomVictims& x) { return x.memcg_id == id; }), v.end());
      return gone;
    };
  }
};

const CgroupStall* exported(const ReclaimStallSection& s, const std::string& path, StallKind kind) {
  auto it = std::find_if(s.cgroups.begin(), s.cgroups.end(),
                         [&](const CgroupStall& c) { return c.cgroup == path && c.kind == kind; });
  return it == s.cgroups.end() ? nullptr : &*it;
}

std::uint64_t node_count(const ReclaimStallSection& s, StallKind kind) {
  return s.node[static_cast<std::size_t>(kind)].count;
}

TEST(StallAttribution, IdsAreNamedByTheirDirectories) {
  ScratchTree tree;
  const std::uint64_t a = tree.make("/a");
  const std::uint64_t b = tree.make("/a/b");
  CgroupIdMap ids;
  const TimePoint t0{1h};
  ids.update(tree.root(), t0);
  KernelMaps kernel;
  kernel.reading.histograms = {stalls(kMemcg, b, 3, 1000), stalls(kDirect, a, 2, 5000), stalls(kMemcg, a, 1, 100),
                               stalls(kDirect, tree.id("/"), 4, 10)};
  kernel.reading.oom_victims = {{b, 2}};
  StallAttribution attribution(ReclaimStallOptions{});
  const ReclaimStallSection s = attribution.attribute(kernel.read(), ids, t0, kernel.forget());
  ASSERT_NE(exported(s, "/a/b", kMemcg), nullptr);
  EXPECT_EQ(exported(s, "/a/b", kMemcg)->stall.count, 3u);
  EXPECT_EQ(exported(s, "/a/b", kMemcg)->stall.sum_ns, 3000u);
  ASSERT_NE(exported(s, "/a", kDirect), nullptr);
  EXPECT_EQ(exported(s, "/a", kDirect)->stall.count, 2u);
  EXPECT_EQ(exported(s, "/a", kMemcg)->stall.count, 1u);
  EXPECT_EQ(exported(s, "/", kDirect)->stall.count, 4u);
  EXPECT_EQ(s.cgroups.size(), 4u);
  // most stall time first: /a (10,100 ns), /a/b (3,000), / (40)
  EXPECT_EQ(s.cgroups.front().cgroup, "/a");
  EXPECT_EQ(s.cgroups.back().cgroup, "/");
  ASSERT_EQ(s.oom_victims.size(), 1u);
  EXPECT_EQ(s.oom_victims[0].cgroup, "/a/b");
  EXPECT_EQ(s.oom_victims[0].count, 2u);
  EXPECT_EQ(s.node_oom_victims, 2u);
  EXPECT_EQ(node_count(s, kDirect), 6u);
  EXPECT_EQ(node_count(s, kMemcg), 4u);
  EXPECT_EQ(s.dropped_cgroups, 0u);
  EXPECT_EQ(s.unresolved_ids, 0u);
  EXPECT_TRUE(kernel.forgotten.empty()) << "nothing is forgotten while its cgroup exists";
}

TEST(StallAttribution, AnIdNeverSeenCountsForTheNodeAndIsForgottenAtOnce) {
  ScratchTree tree;
  CgroupIdMap ids;
  ids.update(tree.root(), TimePoint{1h});
  KernelMaps kernel;
  const std::uint64_t unknown = 0x7fffffffffffull;  // created and removed between two samples
  kernel.reading.histograms = {stalls(kMemcg, unknown, 5, 1000)};
  StallAttribution attribution(ReclaimStallOptions{});
  ReclaimStallSection s = attribution.attribute(kernel.read(), ids, TimePoint{1h}, kernel.forget());
  EXPECT_TRUE(s.cgroups.empty());
  EXPECT_EQ(s.unresolved_ids, 1u);
  EXPECT_EQ(node_count(s, kMemcg), 5u);
  EXPECT_EQ(kernel.forgotten, std::vector<std::uint64_t>{unknown});
  // The kernel no longer has it; the node total does not go back.
  s = attribution.attribute(kernel.read(), ids, TimePoint{1h + 1s}, kernel.forget());
  EXPECT_EQ(node_count(s, kMemcg), 5u);
  EXPECT_EQ(s.node[static_cast<std::size_t>(kMemcg)].sum_ns, 5000u);
}

TEST(StallAttribution, ARemovedCgroupIsKeptForRetainRemovedThenFoldedIntoTheNode) {
  ScratchTree tree;
  const std::uint64_t gone = tree.make("/gone");
  const std::uint64_t stays = tree.make("/stays");
  CgroupIdMap ids;
  TimePoint now{1h};
  ids.update(tree.root(), now);
  KernelMaps kernel;
  kernel.reading.histograms = {stalls(kMemcg, gone, 7, 2000), stalls(kMemcg, stays, 1, 2000)};
  kernel.reading.oom_victims = {{gone, 1}};
  ReclaimStallOptions options;
  options.retain_removed = 5min;
  StallAttribution attribution(options);
  ASSERT_NE(exported(attribution.attribute(kernel.read(), ids, now, kernel.forget()), "/gone", kMemcg), nullptr);

  tree.remove("/gone");
  now += 1s;
  ids.update(tree.root(), now);  // removed_at = now
  const TimePoint removed_at = now;
  for (auto after : {0s, 60s, 300s}) {  // within retain_removed (300 s is not beyond it)
    const ReclaimStallSection s = attribution.attribute(kernel.read(), ids, removed_at + after, kernel.forget());
    ASSERT_NE(exported(s, "/gone", kMemcg), nullptr) << after.count() << " s after removal";
    EXPECT_EQ(exported(s, "/gone", kMemcg)->stall.count, 7u);
    ASSERT_EQ(s.oom_victims.size(), 1u);
    EXPECT_EQ(s.oom_victims[0].cgroup, "/gone");
    EXPECT_EQ(node_count(s, kMemcg), 8u);
    EXPECT_EQ(s.node_oom_victims, 1u);
  }
  EXPECT_TRUE(kernel.forgotten.empty());

  // Past retain_removed: no longer exported, forgotten in the kernel, still in the node totals.
  ReclaimStallSection s = attribution.attribute(kernel.read(), ids, removed_at + 301s, kernel.forget());
  EXPECT_EQ(exported(s, "/gone", kMemcg), nullptr);
  EXPECT_TRUE(s.oom_victims.empty());
  EXPECT_NE(exported(s, "/stays", kMemcg), nullptr);
  EXPECT_EQ(node_count(s, kMemcg), 8u);
  EXPECT_EQ(kernel.forgotten, std::vector<std::uint64_t>{gone});
  EXPECT_EQ(ids.find(gone), nullptr) << "its name goes once the kernel forgot it";
  // Later samples read maps without it: the node totals carry its counts on.
  for (int i = 2; i <= 3; ++i) {
    kernel.reading.histograms[0].count += 1;  // /stays stalls once more each time
    kernel.reading.histograms[0].buckets[log2_slot(2000)] += 1;
    kernel.reading.histograms[0].sum_ns += 2000;
    s = attribution.attribute(kernel.read(), ids, removed_at + 301s + std::chrono::seconds(i), kernel.forget());
    EXPECT_EQ(node_count(s, kMemcg), 7u + i);
    EXPECT_EQ(s.node[static_cast<std::size_t>(kMemcg)].sum_ns, (7u + i) * 2000);
    EXPECT_EQ(s.node[static_cast<std::size_t>(kMemcg)].slots[log2_slot(2000)], 7u + i);
    EXPECT_EQ(s.node_oom_victims, 1u);
  }
  EXPECT_EQ(kernel.forgotten.size(), 1u) << "forgotten once";
}

TEST(StallAttribution, WhatTheKernelCouldNotForgetIsTriedAgainAndNotCountedTwice) {
  ScratchTree tree;
  const std::uint64_t gone = tree.make("/gone");
  CgroupIdMap ids;
  ids.update(tree.root(), TimePoint{1h});
  tree.remove("/gone");
  ids.update(tree.root(), TimePoint{2h});
  KernelMaps kernel;
  kernel.reading.histograms = {stalls(kDirect, gone, 4, 100)};
  kernel.fail_histograms = true;
  ReclaimStallOptions options;
  options.retain_removed = 1s;
  StallAttribution attribution(options);
  ReclaimStallSection s = attribution.attribute(kernel.read(), ids, TimePoint{3h}, kernel.forget());
  EXPECT_EQ(node_count(s, kDirect), 4u);
  EXPECT_NE(ids.find(gone), nullptr) << "kept until the kernel forgot it";
  s = attribution.attribute(kernel.read(), ids, TimePoint{3h + 1s}, kernel.forget());
  EXPECT_EQ(node_count(s, kDirect), 4u) << "the histogram still in the kernel is not also retired";
  kernel.fail_histograms = false;
  s = attribution.attribute(kernel.read(), ids, TimePoint{3h + 2s}, kernel.forget());
  EXPECT_EQ(node_count(s, kDirect), 4u);
  s = attribution.attribute(kernel.read(), ids, TimePoint{3h + 3s}, kernel.forget());
  EXPECT_EQ(node_count(s, kDirect), 4u);
  EXPECT_TRUE(kernel.reading.histograms.empty());
  EXPECT_EQ(kernel.forgotten.size(), 3u);
  EXPECT_EQ(ids.find(gone), nullptr);
}

TEST(StallAttribution, TheCapKeepsTheMostStalledAndCountsTheDropped) {
  ScratchTree tree;
  const std::uint64_t little = tree.make("/little");
  const std::uint64_t most = tree.make("/most");
  const std::uint64_t middle = tree.make("/middle");
  CgroupIdMap ids;
  ids.update(tree.root(), TimePoint{1h});
  KernelMaps kernel;
  kernel.reading.histograms = {stalls(kMemcg, little, 1, 100), stalls(kMemcg, most, 1, 1'000'000),
                               stalls(kDirect, middle, 1, 10'000), stalls(kMemcg, middle, 1, 10'000)};
  ReclaimStallOptions options;
  options.max_cgroups = 2;
  StallAttribution attribution(options);
  auto snapshot = std::make_shared<Snapshot>();
  snapshot->reclaim_stall = attribution.attribute(kernel.read(), ids, TimePoint{1h}, kernel.forget());
  const ReclaimStallSection& s = *snapshot->reclaim_stall;
  EXPECT_EQ(s.dropped_cgroups, 1u);
  EXPECT_NE(exported(s, "/most", kMemcg), nullptr);
  EXPECT_NE(exported(s, "/middle", kDirect), nullptr);
  EXPECT_NE(exported(s, "/middle", kMemcg), nullptr);
  EXPECT_EQ(exported(s, "/little", kMemcg), nullptr);
  EXPECT_EQ(node_count(s, kMemcg), 3u) << "a dropped cgroup still counts for the node";
  EXPECT_TRUE(kernel.forgotten.empty()) << "dropped by the cap is not forgotten";

  SnapshotStore store(1);
  store.publish(snapshot);
  prom::SnapshotCollector collector(store, {});
  std::string text;
  collector.render_text(text);
  EXPECT_NE(text.find("\nmemdiag_reclaim_stall_cgroups_dropped 1\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("cgroup=\"/little\""), std::string::npos);
}

// Loading is retried at most once a minute: a BTF file that does not exist fails the load
// without BPF or privileges, and the clock is the test's.
TEST(ReclaimStallSource, AFailedLoadIsRetriedAtMostOnceAMinute) {
  ReclaimStallOptions options;
  options.btf_path = "/nonexistent/memdiag-test.btf";
  TimePoint now{1h};
  ReclaimStallSource source(KernelPaths{}, options, [&now] { return now; });
  auto first = source.probe();
  ASSERT_FALSE(first);
  EXPECT_NE(first.error().message.find("/nonexistent/memdiag-test.btf"), std::string::npos) << first.error().message;
  EXPECT_EQ(source.load_attempts(), 1u);
  for (int s = 1; s < 60; s += 7) {  // every sample of the next minute
    now = TimePoint{1h} + std::chrono::seconds(s);
    auto again = source.probe();
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().message, first.error().message) << "the same reason, so it is logged once";
  }
  EXPECT_EQ(source.load_attempts(), 1u);
  now = TimePoint{1h} + 60s;
  EXPECT_FALSE(source.probe());
  EXPECT_EQ(source.load_attempts(), 2u);
  now += 59s;
  EXPECT_FALSE(source.probe());
  EXPECT_EQ(source.load_attempts(), 2u);
  now += 1s;
  EXPECT_FALSE(source.probe());
  EXPECT_EQ(source.load_attempts(), 3u);
}

}  // namespace
}  // namespace memdiag
