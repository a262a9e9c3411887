// SPDX-License-Identifier: Apache-2.0
// What is about to break (probes/analysis/breaking_model.hpp) and whose limit killed
// (oom_attribution.hpp), in hand-made snapshots: map counts against vm.max_map_count, cgroups
// whose unreclaimable memory nears the limit (page cache left out), the canary's allocator, and
// OOM kills counted by eBPF, by v1 and v2 cgroup counters, by vmstat alone and by userspace
// killers' marks, each charged to the right scope and held for the window.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>

#include "probes/analysis/breaking_model.hpp"
#include "probes/analysis/oom_attribution.hpp"

namespace memdiag {
namespace {

using namespace std::chrono_literals;
constexpr std::uint64_t kMiB = 1 << 20;
const auto kStart = std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000));

Snapshot at(int seconds) {
  Snapshot s;
  s.taken_at = kStart + std::chrono::seconds(seconds);
  SystemMemory m;
  m.physical_total_bytes = 16384 * kMiB;
  m.physical_available_bytes = 12000 * kMiB;
  s.system_memory = m;
  return s;
}

void set_vmstat_oom_kill(Snapshot& s, std::uint64_t kills) {
  auto schema = std::make_shared<FieldSchema>();
  schema->names = {"pgscan_direct", "oom_kill"};
  schema->kinds = {FieldKind::kCounter, FieldKind::kCounter};
  FieldTable t;
  t.schema = schema;
  t.values = {0, kills};
  s.vmstat = t;
}

CgroupSample cgroup(std::string path, std::optional<std::uint64_t> limit_mib, std::uint64_t anon_mib,
                    std::uint64_t file_mib, std::uint64_t shmem_mib = 0) {
  CgroupSample c;
  c.path = std::move(path);
  c.limited = limit_mib.has_value();
  if (limit_mib) c.limit_bytes = *limit_mib * kMiB;
  c.usage_bytes = (anon_mib + file_mib) * kMiB;  // shmem is part of file
  c.stat = {{"anon", anon_mib * kMiB, false},
            {"file", file_mib * kMiB, false},
            {"inactive_file", file_mib * kMiB / 2, false},
            {"shmem", shmem_mib * kMiB, false}};
  c.failcnt = 0;
  c.events[static_cast<std::size_t>(CgroupEvent::kOomKill)] = 0;
  return c;
}

CgroupSample* find(Snapshot& s, std::string_view path) {
  for (CgroupSample& c : s.cgroups->cgroups) {
    if (c.path == path) return &c;
  }
  return nullptr;
}

void count_kill(CgroupSample& c, std::uint64_t n) { c.events[static_cast<std::size_t>(CgroupEvent::kOomKill)] = n; }

// ---- walls ----

TEST(BreakingModel, NamesAProcessNearMaxMapCountWithItsFigures) {
  Snapshot s = at(0);
  ProcessSection p;
  p.max_map_count = 65530;
  SelectedProcess near;
  near.pid = 4242;
  near.comm = "zig-test";
  near.cgroup = "/jobs";
  near.map_count = 63028;
  near.map_areas_ratio = 63028.0 / 65530;
  SelectedProcess calm = near;
  calm.pid = 7;
  calm.comm = "calm";
  calm.map_count = 3000;
  calm.map_areas_ratio = 3000.0 / 65530;
  p.selected = {calm, near};
  s.processes = p;

  analysis::BreakingModel model;
  const BreakingVerdict v = model.assess(s, nullptr);
  ASSERT_EQ(v.items.size(), 1u);
  const BreakingItem& item = v.items[0];
  EXPECT_EQ(item.kind, breaking_kind::kMapAreas);
  EXPECT_EQ(item.level, VerdictLevel::kHigh);  // 0.962: at or above 0.9, below 0.99
  EXPECT_EQ(v.level, VerdictLevel::kHigh);
  EXPECT_EQ(item.pid, 4242);
  EXPECT_EQ(item.comm, "zig-test");
  EXPECT_EQ(item.cgroup, "/jobs");
  EXPECT_EQ(item.subject, "pid 4242 (zig-test)");
  EXPECT_DOUBLE_EQ(item.value, 63028);
  EXPECT_DOUBLE_EQ(item.limit, 65530);
  EXPECT_NEAR(*item.ratio, 0.9618, 1e-4);
  EXPECT_EQ(item.explanation,
            "pid 4242 (zig-test) holds 63,028 of 65,530 map areas (vm.max_map_count): any mmap, and any munmap or "
            "mprotect that splits a mapping, will fail with ENOMEM regardless of free memory.");

  // At the wall: critical, and it "fails" now.
  s.processes->selected[1].map_count = 65530;
  s.processes->selected[1].map_areas_ratio = 1.0;
  const BreakingVerdict full = model.assess(s, nullptr);
  EXPECT_EQ(full.level, VerdictLevel::kCritical);
  EXPECT_NE(full.items[0].explanation.find("65,530 of 65,530 map areas (vm.max_map_count): any mmap, and any "
                                           "munmap or mprotect that splits a mapping, fails with ENOMEM"),
            std::string::npos);
}

TEST(BreakingModel, CgroupNearItsLimitByAnonButNotByPageCache) {
  Snapshot s = at(0);
  CgroupSection section;
  section.mode = "v1";
  section.cgroups = {
      cgroup("/anon90", 64, 58, 2),          // 58 MiB of anon in 64 MiB: 0.906 -> medium
      cgroup("/cache", 64, 2, 62),           // at its limit, all page cache: 2/64 -> nothing
      cgroup("/tmpfs", 64, 2, 61, 60),       // 60 MiB of the file pages are shmem: 62/64 -> high
      cgroup("/unlimited", std::nullopt, 900, 0),
  };
  s.cgroups = section;
  analysis::BreakingModel model;
  const BreakingVerdict v = model.assess(s, nullptr);
  ASSERT_EQ(v.items.size(), 2u);
  EXPECT_EQ(v.items[0].subject, "/tmpfs");
  EXPECT_EQ(v.items[0].level, VerdictLevel::kHigh);  // 0.969
  EXPECT_DOUBLE_EQ(v.items[0].value, 62.0 * kMiB);
  EXPECT_EQ(v.items[1].subject, "/anon90");
  EXPECT_EQ(v.items[1].kind, breaking_kind::kCgroupLimit);
  EXPECT_EQ(v.items[1].level, VerdictLevel::kMedium);
  EXPECT_DOUBLE_EQ(v.items[1].value, 58.0 * kMiB);
  EXPECT_DOUBLE_EQ(v.items[1].limit, 64.0 * kMiB);
  EXPECT_NEAR(*v.items[1].ratio, 58.0 / 64, 1e-9);
  EXPECT_EQ(v.items[1].explanation,
            "cgroup /anon90 holds 58MiB that reclaim cannot free (anon, shmem, kernel memory; page cache left out) "
            "of its 64MiB limit (91 %): growing by 6MiB ends in an OOM kill inside it.");
}

TEST(BreakingModel, AllocatorNearItsCeilingAndRecentFailures) {
  Snapshot before = at(0), now = at(1);
  CanarySection c;
  c.allocator.ceiling_bytes = 64 * kMiB;
  c.allocator.held_bytes = 8 * kMiB;
  before.canary = c;
  now.canary = c;
  analysis::BreakingModel model;
  EXPECT_TRUE(model.assess(now, &before).items.empty());  // 12 %: nothing

  now.canary->allocator.held_bytes = 61 * kMiB;  // 95.3 %
  BreakingVerdict v = model.assess(now, &before);
  ASSERT_EQ(v.items.size(), 1u);
  EXPECT_EQ(v.items[0].kind, breaking_kind::kAllocatorCeiling);
  EXPECT_EQ(v.items[0].level, VerdictLevel::kHigh);

  // Refused allocations: high even with little held, and held for the window.
  now.canary->allocator.held_bytes = 8 * kMiB;
  now.canary->allocator.failed_allocations_total = 3;
  v = model.assess(now, &before);
  ASSERT_EQ(v.items.size(), 1u);
  EXPECT_EQ(v.items[0].level, VerdictLevel::kHigh);
  EXPECT_NE(v.items[0].explanation.find("refused 3 allocations"), std::string::npos);
  Snapshot later = now;
  later.taken_at = kStart + 200s;
  EXPECT_EQ(model.assess(later, &now).items.size(), 1u);
  later.taken_at = kStart + 302s;
  EXPECT_TRUE(model.assess(later, &now).items.empty());
}

// ---- OOM kills ----

// A v1 layout: /jobs has a 512 MiB limit, /jobs/g none; /ceiling has its own 512 MiB limit;
// /idle holds 8 GiB without a limit.
struct V1Kills {
  Snapshot start = at(0), now = at(1);
  V1Kills() {
    for (Snapshot* s : {&start, &now}) {
      CgroupSection section;
      section.mode = "v1";
      section.cgroups = {cgroup("/jobs", 512, 400, 0), cgroup("/jobs/g", std::nullopt, 400, 0),
                         cgroup("/ceiling", 512, 100, 0), cgroup("/idle", std::nullopt, 8192, 0)};
      s->cgroups = section;
      set_vmstat_oom_kill(*s, 10);
    }
  }
};

TEST(OomAttribution, AV1KillUnderALimitedParentIsTheParentsAndCountedOnce) {
  V1Kills k;
  // The kernel counted the kill in the victim's own memory.oom_control only; /jobs's failcnt
  // says its limit was hit.
  count_kill(*find(k.now, "/jobs/g"), 1);
  find(k.now, "/jobs")->failcnt = 250;
  set_vmstat_oom_kill(k.now, 11);
  const auto kills = analysis::attribute_oom_kills(k.now, k.start);
  ASSERT_EQ(kills.size(), 1u);
  EXPECT_EQ(kills[0].scope, "/jobs");
  EXPECT_EQ(kills[0].victim_cgroup, "/jobs/g");
  EXPECT_EQ(kills[0].count, 1u);
  EXPECT_EQ(kills[0].source, oom_killer::kKernel);
  EXPECT_EQ(kills[0].counted_by, "memory.oom_control");
  EXPECT_EQ(kills[0].scope_limit_bytes, 512 * kMiB);
}

TEST(OomAttribution, AKillAtItsOwnLimitByUsageWhenNoCounterSaysSo) {
  V1Kills k;
  for (Snapshot* s : {&k.start, &k.now}) {
    for (CgroupSample& c : s->cgroups->cgroups) c.failcnt.reset();  // no limit-hit counter
  }
  find(k.start, "/ceiling")->usage_bytes = 510 * kMiB;  // within 5 % of 512 MiB before the kill
  count_kill(*find(k.now, "/ceiling"), 2);
  set_vmstat_oom_kill(k.now, 12);
  const auto kills = analysis::attribute_oom_kills(k.now, k.start);
  ASSERT_EQ(kills.size(), 1u);
  EXPECT_EQ(kills[0].scope, "/ceiling");
  EXPECT_EQ(kills[0].victim_cgroup, "/ceiling");
  EXPECT_EQ(kills[0].count, 2u);
}

TEST(OomAttribution, NoLimitedAncestorAtItsLimitIsAGlobalOom) {
  V1Kills k;
  count_kill(*find(k.now, "/idle"), 1);
  set_vmstat_oom_kill(k.now, 11);
  const auto kills = analysis::attribute_oom_kills(k.now, k.start);
  ASSERT_EQ(kills.size(), 1u);
  EXPECT_EQ(kills[0].scope, "node");
  EXPECT_EQ(kills[0].scope_limit_bytes, 16384 * kMiB);
}

TEST(OomAttribution, KillsNoCgroupExplainsAreTheNodesOnlyWhenItWasShort) {
  V1Kills k;
  set_vmstat_oom_kill(k.now, 13);  // three kills, no cgroup counted one
  auto kills = analysis::attribute_oom_kills(k.now, k.start);
  ASSERT_EQ(kills.size(), 1u);
  EXPECT_EQ(kills[0].scope, "");  // the node had 12 GiB available: some unseen cgroup's limit
  EXPECT_EQ(kills[0].count, 3u);
  EXPECT_EQ(kills[0].counted_by, "vmstat");
  k.start.system_memory->physical_available_bytes = 300 * kMiB;  // 1.8 % of RAM before the kills
  kills = analysis::attribute_oom_kills(k.now, k.start);
  ASSERT_EQ(kills.size(), 1u);
  EXPECT_EQ(kills[0].scope, "node");
}

TEST(OomAttribution, V2CountsAreHierarchicalAndNotCountedInEveryAncestor) {
  Snapshot start = at(0), now = at(1);
  for (Snapshot* s : {&start, &now}) {
    CgroupSection section;
    section.mode = "v2";
    section.cgroups = {cgroup("/kubepods", 8192, 900, 0), cgroup("/kubepods/pod", 256, 250, 0),
                       cgroup("/kubepods/pod/ctr", std::nullopt, 250, 0)};
    for (CgroupSample& c : section.cgroups) {
      c.failcnt.reset();
      c.events[static_cast<std::size_t>(CgroupEvent::kMax)] = 0;
    }
    s->cgroups = section;
  }
  // One kill at the pod's limit: memory.events propagates it to every ancestor.
  for (const char* path : {"/kubepods", "/kubepods/pod", "/kubepods/pod/ctr"}) count_kill(*find(now, path), 1);
  for (const char* path : {"/kubepods", "/kubepods/pod"}) {
    find(now, path)->events[static_cast<std::size_t>(CgroupEvent::kMax)] = 40;
  }
  const auto kills = analysis::attribute_oom_kills(now, start);
  ASSERT_EQ(kills.size(), 1u);
  EXPECT_EQ(kills[0].victim_cgroup, "/kubepods/pod/ctr");
  EXPECT_EQ(kills[0].scope, "/kubepods/pod");  // the innermost limit that was hit
  EXPECT_EQ(kills[0].counted_by, "memory.events");
}

TEST(OomAttribution, EbpfVictimsWinOverCountersAndVmstatKeepsTheRest) {
  V1Kills k;
  for (Snapshot* s : {&k.start, &k.now}) {
    ReclaimStallSection r;
    r.oom_victims_mode = "tp_btf";
    r.oom_victims = {{"/ceiling", 4}};
    s->reclaim_stall = r;
  }
  k.now.reclaim_stall->oom_victims = {{"/ceiling", 5}, {"/removed-job", 1}};  // a new path counts whole
  // eBPF's ring of the last victims: number 4 was seen before; 5 and 6 are new.
  k.start.reclaim_stall->recent_oom_victims = {{4, 100, "old", "/ceiling"}};
  k.now.reclaim_stall->recent_oom_victims = {
      {4, 100, "old", "/ceiling"}, {5, 4242, "python3", "/ceiling"}, {6, 4343, "job", "/removed-job"}};
  find(k.now, "/ceiling")->failcnt = 9;
  count_kill(*find(k.now, "/ceiling"), 1);  // the same kill, by the counter: not twice
  set_vmstat_oom_kill(k.now, 13);           // one more that eBPF could not resolve
  const auto kills = analysis::attribute_oom_kills(k.now, k.start);
  ASSERT_EQ(kills.size(), 3u);
  EXPECT_EQ(kills[0].victim_cgroup, "/ceiling");
  EXPECT_EQ(kills[0].scope, "/ceiling");
  EXPECT_EQ(kills[0].count, 1u);
  EXPECT_EQ(kills[0].counted_by, "ebpf");
  ASSERT_EQ(kills[0].victims.size(), 1u);
  EXPECT_EQ(kills[0].victims[0].pid, 4242);
  EXPECT_EQ(kills[0].victims[0].comm, "python3");
  EXPECT_EQ(kills[1].victim_cgroup, "/removed-job");
  ASSERT_EQ(kills[1].victims.size(), 1u);
  EXPECT_EQ(kills[1].victims[0].pid, 4343);
  EXPECT_EQ(kills[1].scope, "");  // nothing known of it, and the node was not short: no scope to name
  EXPECT_EQ(kills[2].counted_by, "vmstat");
  EXPECT_EQ(kills[2].count, 1u);

  // The item names the victim.
  analysis::BreakingModel model;
  const BreakingVerdict v = model.assess(k.now, &k.start);
  const auto item = std::find_if(v.items.begin(), v.items.end(), [](const BreakingItem& i) { return i.subject == "/ceiling"; });
  ASSERT_NE(item, v.items.end());
  EXPECT_EQ(item->pid, 4242);
  EXPECT_EQ(item->comm, "python3");
  EXPECT_EQ(item->explanation,
            "the kernel's OOM killer killed 1 task (pid 4242 python3) in /ceiling at its own 512MiB limit.");
}

TEST(OomAttribution, UserspaceKillersMarks) {
  V1Kills k;
  find(k.start, "/ceiling")->oomd_user_kills = 1;
  find(k.now, "/ceiling")->oomd_user_kills = 3;    // systemd-oomd killed two more processes
  find(k.now, "/idle")->oomd_trusted_kills = 1;    // oomd (first mark: from nothing)
  find(k.now, "/idle")->oomd_user_kills = 1;       // newer oomd writes both: not systemd-oomd's
  const auto kills = analysis::attribute_oom_kills(k.now, k.start);
  ASSERT_EQ(kills.size(), 2u);
  EXPECT_EQ(kills[0].scope, "/ceiling");
  EXPECT_EQ(kills[0].source, oom_killer::kSystemdOomd);
  EXPECT_EQ(kills[0].count, 2u);
  EXPECT_EQ(kills[0].counted_by, "xattr");
  EXPECT_EQ(kills[1].scope, "/idle");
  EXPECT_EQ(kills[1].source, oom_killer::kOomd);
  EXPECT_EQ(kills[1].count, 1u);
}

// Where the marks are watched as they are written, the kills come from that ring, by
// sequence: also the kill of a cgroup removed before the sample (systemd removes a killed
// transient unit's at once), and each once.
TEST(OomAttribution, UserspaceKillsCaughtAsMarkedOutliveTheirCgroup) {
  V1Kills k;
  k.start.cgroups->userspace_oom_kills = std::vector<UserspaceOomKill>{{1, "/ceiling", 1, false}};
  k.now.cgroups->userspace_oom_kills = std::vector<UserspaceOomKill>{
      {1, "/ceiling", 1, false},                     // seen in the start snapshot already
      {2, "/gone.slice/killed.service", 1, false},   // its cgroup is in neither snapshot
      {3, "/gone.slice/killed.service", 2, false},   // its oomd_kill: three processes in all
      {4, "/idle", 1, true}};                        // oomd's
  find(k.now, "/ceiling")->oomd_user_kills = 5;    // the per-cgroup marks are not counted again
  const auto kills = analysis::attribute_oom_kills(k.now, k.start);
  ASSERT_EQ(kills.size(), 2u);
  EXPECT_EQ(kills[0].scope, "/gone.slice/killed.service");
  EXPECT_EQ(kills[0].victim_cgroup, "/gone.slice/killed.service");
  EXPECT_EQ(kills[0].source, oom_killer::kSystemdOomd);
  EXPECT_EQ(kills[0].count, 3u);
  EXPECT_EQ(kills[0].counted_by, "xattr");
  EXPECT_EQ(kills[1].scope, "/idle");
  EXPECT_EQ(kills[1].source, oom_killer::kOomd);

  // Without the ring at the start (the watcher began later), the per-cgroup marks count.
  k.start.cgroups->userspace_oom_kills.reset();
  const auto fallback = analysis::attribute_oom_kills(k.now, k.start);
  ASSERT_EQ(fallback.size(), 1u);
  EXPECT_EQ(fallback[0].scope, "/ceiling");
}

TEST(BreakingModel, AKillIsHeldForTheWindowThenACrashLoopIsCritical) {
  V1Kills k;
  analysis::BreakingModel model;
  EXPECT_EQ(model.assess(k.start, nullptr).level, VerdictLevel::kNone);
  count_kill(*find(k.now, "/ceiling"), 1);
  find(k.now, "/ceiling")->failcnt = 5;
  set_vmstat_oom_kill(k.now, 11);
  BreakingVerdict v = model.assess(k.now, &k.start);
  ASSERT_EQ(v.items.size(), 1u);
  EXPECT_EQ(v.items[0].kind, breaking_kind::kOomKill);
  EXPECT_EQ(v.items[0].level, VerdictLevel::kHigh);
  EXPECT_EQ(v.items[0].subject, "/ceiling");
  EXPECT_EQ(v.items[0].cgroup, "/ceiling");
  EXPECT_DOUBLE_EQ(v.items[0].value, 1);
  EXPECT_DOUBLE_EQ(v.items[0].limit, 512.0 * kMiB);
  EXPECT_EQ(v.items[0].explanation, "the kernel's OOM killer killed 1 task in /ceiling at its own 512MiB limit.");

  // The cgroup is removed: the kill stays an item for the window.
  Snapshot gone = k.now;
  gone.taken_at = kStart + 100s;
  std::erase_if(gone.cgroups->cgroups, [](const CgroupSample& c) { return c.path == "/ceiling"; });
  v = model.assess(gone, &k.now);
  ASSERT_EQ(v.items.size(), 1u);
  EXPECT_EQ(v.items[0].subject, "/ceiling");

  // Two more kills in a re-created /ceiling within the window: three, a crash loop.
  Snapshot again = k.now;
  again.taken_at = kStart + 120s;
  count_kill(*find(again, "/ceiling"), 3);
  find(again, "/ceiling")->failcnt = 9;
  set_vmstat_oom_kill(again, 13);
  v = model.assess(again, &k.now);
  ASSERT_EQ(v.items.size(), 1u);
  EXPECT_DOUBLE_EQ(v.items[0].value, 3);
  EXPECT_EQ(v.level, VerdictLevel::kCritical);

  Snapshot later = again;
  later.taken_at = kStart + 302s;  // the first kill is out of the window; the other two are not
  v = model.assess(later, &again);
  ASSERT_EQ(v.items.size(), 1u);
  EXPECT_DOUBLE_EQ(v.items[0].value, 2);
  EXPECT_EQ(v.level, VerdictLevel::kHigh);
  later.taken_at = kStart + 421s;
  EXPECT_TRUE(model.assess(later, &later).items.empty());
}

TEST(BreakingModel, TheCapKeepsTheHighestLevels) {
  Snapshot s = at(0);
  CgroupSection section;
  for (int i = 0; i < 30; ++i) section.cgroups.push_back(cgroup("/c" + std::to_string(i), 100, 86 + i % 14, 0));
  s.cgroups = section;
  analysis::BreakingSettings settings;
  settings.max_items = 5;
  analysis::BreakingModel model(settings);
  const BreakingVerdict v = model.assess(s, nullptr);
  // 86..99 % of the limit, 30 cgroups: two at 99 % (critical), eight at 95..98 % (high), ...
  ASSERT_EQ(v.items.size(), 5u);
  EXPECT_EQ(v.dropped_items, 25u);
  EXPECT_EQ(v.level, VerdictLevel::kCritical);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(v.items[i].level, i < 2 ? VerdictLevel::kCritical : VerdictLevel::kHigh) << v.items[i].subject;
  }
}

}  // namespace
}  // namespace memdiag
