// SPDX-License-Identifier: Apache-2.0
// The cgroup source against a cgroup v2 fixture tree (written from the kernel's cgroup-v2.rst:
// nested slices, kubepods of both kubelet drivers, "max" limits, a cgroup with garbage files),
// and against this machine's real hierarchy (hybrid: v1 memory + cgroup2 for PSI).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "exporters/prometheus/exposition.hpp"
#include "exporters/prometheus/snapshot_collector.hpp"
#include "probes/analysis/derive_figures.hpp"
#include "probes/catalog/source_catalog.hpp"
#include "probes/linux/cgroup/cgroup_options.hpp"

namespace memdiag {
namespace {

const std::string kTree = MEMDIAG_SOURCE_DIR "/tests/fixtures/cgroup-v2";
const KernelPaths kPaths{kTree + "/proc", kTree + "/sys"};
const std::string kPod =
    "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod6f1c2a4e_8b3d_4c2e_9f10_1234567890ab.slice";
const std::string kContainer =
    kPod + "/cri-containerd-0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9.scope";

CgroupSection sample_tree(const CgroupOptions& options = {}) {
  auto source = make_source("cgroup", kPaths, options);
  EXPECT_TRUE(source->probe());
  Snapshot snap;
  auto st = source->sample(snap);
  EXPECT_TRUE(st) << (st ? "" : st.error().message);
  return snap.cgroups.value_or(CgroupSection{});
}

const CgroupSample* find(const CgroupSection& section, const std::string& path) {
  for (const auto& c : section.cgroups) {
    if (c.path == path) return &c;
  }
  return nullptr;
}

TEST(CgroupSource, V2TreeIsFoundThroughMountinfo) {
  const auto section = sample_tree();
  EXPECT_EQ(section.mode, "v2");
  EXPECT_EQ(section.discovered, 21u);  // the root and 20 cgroups below it
  EXPECT_EQ(section.dropped, 0u);
}

TEST(CgroupSource, ContainerValuesEventsStatAndPressure) {
  const auto section = sample_tree();
  const CgroupSample* c = find(section, kContainer);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->usage_bytes, 1063256064u);
  EXPECT_TRUE(c->limited);
  EXPECT_EQ(c->limit_bytes, 1073741824u);
  EXPECT_FALSE(c->high_bytes.has_value());  // "max"
  EXPECT_EQ(c->events[static_cast<int>(CgroupEvent::kMax)], 340u);
  EXPECT_EQ(c->events[static_cast<int>(CgroupEvent::kOomKill)], 1u);
  ASSERT_TRUE(c->pressure.has_value());
  EXPECT_DOUBLE_EQ(c->pressure->some.avg10, 0.425);
  EXPECT_EQ(c->pressure->full->total_us, 66000000u);
  auto stat = [c](std::string_view key) -> std::optional<std::uint64_t> {
    for (const auto& s : c->stat) {
      if (s.key == key) return s.value;
    }
    return std::nullopt;
  };
  EXPECT_EQ(stat("anon"), 1000000000u);
  EXPECT_EQ(stat("workingset_refault_file"), 45000u);
  EXPECT_EQ(stat("pgscan"), 900000u);
  EXPECT_EQ(stat("pgmajfault"), 1234u);
  EXPECT_FALSE(stat("thp_fault_alloc").has_value());  // not a reclaim key
  EXPECT_EQ(c->identity.pod_uid, "6f1c2a4e-8b3d-4c2e-9f10-1234567890ab");
  EXPECT_EQ(c->identity.qos_class, "burstable");
  EXPECT_EQ(c->identity.container_id, "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9");
}

TEST(CgroupSource, UnlimitedIsAbsentAndTheRootHasNoUsageFile) {
  const auto section = sample_tree();
  const CgroupSample* sshd = find(section, "/system.slice/sshd.service");
  ASSERT_NE(sshd, nullptr);
  EXPECT_FALSE(sshd->limited);
  EXPECT_FALSE(sshd->limit_bytes.has_value());
  EXPECT_EQ(sshd->identity.unit, "sshd.service");
  const CgroupSample* root = find(section, "/");
  ASSERT_NE(root, nullptr);
  EXPECT_FALSE(root->usage_bytes.has_value());
  ASSERT_TRUE(root->pressure.has_value());
  EXPECT_DOUBLE_EQ(root->pressure->some.avg10, 0.035);
}

TEST(CgroupSource, GarbageFilesAreCountedAndLeftAbsent) {
  const auto section = sample_tree();
  EXPECT_EQ(section.malformed_files, 3u);  // memory.current, memory.max (2^64), memory.stat (duplicate)
  EXPECT_NE(section.first_malformed.find("/broken.slice/"), std::string::npos) << section.first_malformed;
  const CgroupSample* broken = find(section, "/broken.slice");
  ASSERT_NE(broken, nullptr);
  EXPECT_FALSE(broken->usage_bytes.has_value());
  EXPECT_FALSE(broken->limit_bytes.has_value());
  EXPECT_TRUE(broken->stat.empty());
  EXPECT_FALSE(broken->events[0].has_value());  // memory.events missing
  EXPECT_TRUE(broken->pressure.has_value());    // the good files still count
}

TEST(CgroupSource, CapKeepsTheMostPressuredAndCountsTheRest) {
  CgroupOptions options;
  options.max_cgroups = 3;
  const auto section = sample_tree(options);
  ASSERT_EQ(section.cgroups.size(), 3u);
  EXPECT_EQ(section.dropped, 18u);
  // Pressure first: the pod and its container share 42.5%, and the pod is the fuller of the two
  // (1.0 of its limit against 0.99); then the root at 3.5%.
  EXPECT_EQ(section.cgroups[0].path, kPod);
  EXPECT_EQ(section.cgroups[1].path, kContainer);
  EXPECT_EQ(section.cgroups[2].path, "/");
}

TEST(CgroupSource, DepthAndPatternsBoundTheWalk) {
  CgroupOptions shallow;
  shallow.cgroup_discovery.max_depth = 1;
  const auto top = sample_tree(shallow);
  EXPECT_EQ(top.discovered, 6u);  // "/", system, user, kubepods.slice, kubepods, broken
  CgroupOptions only_pods;
  only_pods.cgroup_discovery.include = {"/kubepods.slice/*"};
  only_pods.cgroup_discovery.exclude = {"*besteffort*"};
  const auto pods = sample_tree(only_pods);
  for (const auto& c : pods.cgroups) {
    EXPECT_EQ(c.path.rfind("/kubepods.slice/", 0), 0u) << c.path;
    EXPECT_EQ(c.path.find("besteffort"), std::string::npos) << c.path;
  }
  EXPECT_EQ(pods.discovered, 5u);  // burstable slice, its pod and container, the guaranteed pod and container
}

TEST(CgroupSource, LeafLimitsAreSummedForOvercommit) {
  const auto section = sample_tree();
  // limited leaves: the burstable container (1 GiB) and the guaranteed container (2 GiB)
  EXPECT_EQ(section.leaf_limits_sum_bytes, 1073741824u + 2147483648u);
  EXPECT_EQ(section.limited_leaves, 2u);
  // As they bind: kubepods.slice (19 GiB) caps its subtree, unlimited best-effort pods included.
  EXPECT_EQ(section.effective_limits_sum_bytes, 20401094656u);
  ASSERT_EQ(section.limits.size(), 5u);  // kubepods.slice, two pods, two containers
  EXPECT_EQ(section.limits_dropped, 0u);
  for (const CgroupLimit& l : section.limits) {
    EXPECT_EQ(l.path.rfind("/kubepods.slice", 0), 0u) << l.path;
    EXPECT_LE(l.effective_limit_bytes, l.limit_bytes) << l.path;
  }
  const CgroupLimit& top = section.limits.front();
  EXPECT_EQ(top.path, "/kubepods.slice");
  EXPECT_EQ(top.headroom_bytes, 20401094656u - 3221225472u);
  // The guaranteed pod is at its limit: no headroom for its container either.
  const CgroupLimit& container = section.limits.back();
  EXPECT_EQ(container.path.rfind("/kubepods.slice/kubepods-pod1111", 0), 0u) << container.path;
  EXPECT_EQ(container.headroom_bytes, 0u);
}

TEST(CgroupSource, ExpositionHasKubernetesLabelsAndPassesNameChecks) {
  SnapshotStore store(1);
  auto snap = std::make_shared<Snapshot>();
  for (std::string_view name : {"meminfo", "cgroup"}) {
    auto source = make_source(name, kPaths);
    ASSERT_TRUE(source->probe());
    ASSERT_TRUE(source->sample(*snap));
  }
  analysis::derive_figures(*snap);  // as the sampler does once every source has sampled
  store.publish(snap);
  std::string text;
  prom::SnapshotCollector(store, {}).render_text(text);
  EXPECT_NE(text.find("memdiag_cgroup_memory_usage_bytes{cgroup=\"" + kContainer +
                      "\",pod_uid=\"6f1c2a4e-8b3d-4c2e-9f10-1234567890ab\",qos_class=\"burstable\",container_id="
                      "\"0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9\"} 1063256064\n"),
            std::string::npos);
  EXPECT_NE(text.find("memdiag_cgroup_memory_events_total{cgroup=\"" + kPod +
                      "\",pod_uid=\"6f1c2a4e-8b3d-4c2e-9f10-1234567890ab\",qos_class=\"burstable\",event=\"oom_kill\"} 1\n"),
            std::string::npos);
  // no limit series for an unlimited cgroup, and never 2^63
  EXPECT_EQ(text.find("memdiag_cgroup_memory_limit_bytes{cgroup=\"/system.slice/sshd.service\""), std::string::npos);
  EXPECT_EQ(text.find("9223372036854771712"), std::string::npos);
  // The limits as they bind over MemTotal of the fixture: kubepods.slice's 19 GiB caps its
  // subtree, where the best-effort pods have no limit of their own (the leaf sum, 1 + 2 GiB, was
  // blind to them).
  const double ratio = 20401094656.0 / (24683656.0 * 1024);
  std::string expected = "memdiag_cgroup_limit_overcommit_ratio ";
  prom::append_value(expected, ratio);
  EXPECT_NE(text.find(expected + "\n"), std::string::npos);
}

TEST(CgroupSource, V2WatchesMemoryEventsOfTheExportedCgroups) {
  CgroupOptions options;
  options.max_watched_cgroups = 5;
  auto source = make_source("cgroup", kPaths, options);
  ASSERT_TRUE(source->probe());
  Snapshot snap;
  ASSERT_TRUE(source->sample(snap));
  const CgroupSection& section = *snap.cgroups;
  // The five most important exported cgroups, minus those without a readable memory.events
  // (the root has none in v2).
  std::size_t with_events = 0;
  for (std::size_t i = 0; i < 5; ++i) {
    with_events += std::filesystem::exists(kTree + "/sys/fs/cgroup" + section.cgroups[i].path + "/memory.events");
  }
  EXPECT_EQ(section.watched, with_events);
  ASSERT_GT(section.watched, 0u);
  std::size_t notified = 0;
  for (const auto& c : section.cgroups) {
    if (!c.notifications) continue;
    ++notified;
    EXPECT_FALSE(c.notifications->has_pressure_levels) << c.path;
    EXPECT_EQ(c.notifications->oom, 0u) << c.path;  // counting starts when watched
  }
  EXPECT_EQ(notified, section.watched);
}

TEST(CgroupSource, AContainersViewStillNamesItsPod) {
  // Inside a container without a cgroup namespace, the cgroup2 mount shows only the pod's
  // subtree: mountinfo's root field says which one. The pod is recognised from root + path.
  const std::string scratch = std::filesystem::temp_directory_path() / ("memdiag-view-" + std::to_string(::getpid()));
  std::filesystem::create_directories(scratch + "/proc/self");
  std::filesystem::create_directories(scratch + "/sys/fs");
  std::filesystem::create_directory_symlink(kTree + "/sys/fs/cgroup" + kPod, scratch + "/sys/fs/cgroup");
  {
    std::ofstream mountinfo(scratch + "/proc/self/mountinfo");
    mountinfo << "1 0 8:1 / / rw - ext4 /dev/sda1 rw\n"
              << "25 1 0:23 " << kPod << " /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n";
  }
  auto source = make_source("cgroup", KernelPaths{scratch + "/proc", scratch + "/sys"});
  ASSERT_TRUE(source->probe());
  Snapshot snap;
  ASSERT_TRUE(source->sample(snap));
  std::filesystem::remove_all(scratch);
  const CgroupSection& section = *snap.cgroups;
  ASSERT_EQ(section.discovered, 2u);  // the pod (its "/") and its container
  const std::string container = kContainer.substr(kPod.size());
  const CgroupSample* c = find(section, container);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->identity.pod_uid, "6f1c2a4e-8b3d-4c2e-9f10-1234567890ab");
  EXPECT_EQ(c->identity.qos_class, "burstable");
  EXPECT_EQ(c->identity.container_id, "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9");
  const CgroupSample* pod = find(section, "/");
  ASSERT_NE(pod, nullptr);
  EXPECT_EQ(pod->identity.pod_uid, "6f1c2a4e-8b3d-4c2e-9f10-1234567890ab");
}

TEST(CgroupSource, ThisMachineIsHybrid) {
  auto source = make_source("cgroup", KernelPaths{});
  ASSERT_TRUE(source->probe());
  Snapshot snap;
  ASSERT_TRUE(source->sample(snap));
  // Build machines: v1 memory + cgroup2 (PSI only). Elsewhere this states what it found.
  const bool v1_memory = std::filesystem::exists("/sys/fs/cgroup/memory/memory.usage_in_bytes");
  const CgroupSample* root = find(*snap.cgroups, "/");
  ASSERT_NE(root, nullptr);
  if (v1_memory) {
    EXPECT_EQ(snap.cgroups->mode, std::filesystem::exists("/sys/fs/cgroup/unified") ? "hybrid" : "v1");
    EXPECT_TRUE(root->usage_bytes.has_value());
  }
}

}  // namespace
}  // namespace memdiag
