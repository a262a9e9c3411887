// SPDX-License-Identifier: Apache-2.0
// select_processes: which processes are exported, the ratio histogram and the
// per-cgroup sums, on hand-made scans.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "probes/core/process_selection.hpp"
#include "probes/core/utf8_text.hpp"

namespace memdiag {
namespace {

ProcessMaps process(int pid, std::uint32_t maps, std::uint64_t rss_anon, std::uint64_t cgroup_key = 1,
                    const char* comm = "worker") {
  ProcessMaps p;
  p.pid = pid;
  p.map_count = maps;
  p.rss_anon_bytes = rss_anon;
  p.rss_file_bytes = 10;
  p.rss_shmem_bytes = 1;
  p.swap_bytes = 5;
  p.virtual_bytes = 1000;
  p.cgroup_key = cgroup_key;
  std::strncpy(p.comm.data(), comm, p.comm.size() - 1);
  return p;
}

struct Names {
  std::map<std::uint64_t, std::string> paths = {{1, "/a"}, {2, "/b"}, {3, "/c"}};
  CgroupNamer namer() const {
    return [this](std::uint64_t key) -> const std::string* {
      auto it = paths.find(key);
      return it == paths.end() ? nullptr : &it->second;
    };
  }
};

const SelectedProcess* find(const ProcessSection& s, int pid) {
  auto it = std::find_if(s.selected.begin(), s.selected.end(), [pid](const SelectedProcess& p) { return p.pid == pid; });
  return it == s.selected.end() ? nullptr : &*it;
}

TEST(ProcessSelection, TopByMapCountAndByResidentMemoryThresholdAndSelf) {
  std::vector<ProcessMaps> all;
  for (int pid = 100; pid < 200; ++pid) all.push_back(process(pid, 50, 1000));
  all.push_back(process(500, 900, 10));        // most mappings, little memory
  all.push_back(process(501, 850, 10));        // second most mappings
  all.push_back(process(502, 60, 1 << 30));    // most memory
  all.push_back(process(503, 40, 20));         // "the daemon": nothing remarkable
  ProcessSelectionOptions options;
  options.top_n = 2;
  options.threshold_ratio = 0.8;
  options.self_pid = 503;
  Names names;
  const ProcessSection s = select_processes(all, 1000, options, names.namer());

  EXPECT_EQ(s.processes, 104u);
  EXPECT_DOUBLE_EQ(s.map_areas_ratio_max, 0.9);
  EXPECT_EQ(s.above_threshold, 2u);  // 900 and 850 of 1000
  ASSERT_NE(find(s, 500), nullptr);
  EXPECT_EQ(find(s, 500)->selected_for, kTopMapAreas | kAboveThreshold);
  EXPECT_EQ(find(s, 501)->selected_for, kTopMapAreas | kAboveThreshold);
  EXPECT_EQ(find(s, 502)->selected_for, kTopResident);
  EXPECT_EQ(find(s, 503)->selected_for, kSelf);
  // Second by memory: the 100 equal ones tie, the lowest pid wins so the choice is stable.
  EXPECT_EQ(find(s, 100)->selected_for, kTopResident);
  EXPECT_EQ(s.selected.size(), 5u);
  EXPECT_TRUE(std::is_sorted(s.selected.begin(), s.selected.end(),
                             [](const SelectedProcess& a, const SelectedProcess& b) { return a.pid < b.pid; }));
  const SelectedProcess& top = *find(s, 500);
  EXPECT_EQ(top.map_count, 900u);
  EXPECT_DOUBLE_EQ(top.map_areas_ratio, 0.9);
  EXPECT_EQ(top.comm, "worker");
  EXPECT_EQ(top.cgroup, "/a");
  EXPECT_EQ(top.rss_file_bytes, 10u);
  EXPECT_EQ(top.swap_bytes, 5u);
  EXPECT_EQ(top.virtual_bytes, 1000u);
}

TEST(ProcessSelection, RatioHistogramIsCumulative) {
  // Ratios against 10,000: 0.0005, 0.005, 0.05, 0.2, 0.8 (exactly on a bound), 0.95, 1.2.
  std::vector<ProcessMaps> all;
  int pid = 1;
  for (std::uint32_t maps : {5u, 50u, 500u, 2000u, 8000u, 9500u, 12000u}) all.push_back(process(pid++, maps, 1));
  const ProcessSection s = select_processes(all, 10000, {}, Names().namer());
  // Bounds 0.001 0.01 0.1 0.25 0.5 0.8 0.9 1.0 +Inf
  const std::array<std::uint64_t, 9> expected = {1, 2, 3, 4, 4, 5, 5, 6, 7};
  EXPECT_EQ(s.ratio_cumulative, expected);
  EXPECT_DOUBLE_EQ(s.map_areas_ratio_max, 1.2);
  EXPECT_EQ(s.above_threshold, 3u);  // 0.8 counts: "at or above"
}

TEST(ProcessSelection, AboveThresholdIsCappedHighestFirst) {
  std::vector<ProcessMaps> all;
  for (int pid = 1; pid <= 50; ++pid) all.push_back(process(pid, 900 + static_cast<std::uint32_t>(pid), 1));
  ProcessSelectionOptions options;
  options.top_n = 0;
  options.max_above_threshold = 10;
  const ProcessSection s = select_processes(all, 1000, options, Names().namer());
  EXPECT_EQ(s.above_threshold, 50u);
  EXPECT_EQ(s.above_threshold_dropped, 40u);
  ASSERT_EQ(s.selected.size(), 10u);
  for (const SelectedProcess& p : s.selected) {
    EXPECT_GE(p.pid, 41) << "the ten highest ratios";
    EXPECT_EQ(p.selected_for, kAboveThreshold);
  }
}

TEST(ProcessSelection, CgroupSumsAddUpOverAllProcessesAndAreCapped) {
  std::vector<ProcessMaps> all = {process(1, 10, 100, 1), process(2, 20, 200, 1), process(3, 30, 5000, 2),
                                  process(4, 40, 7, 3),   process(5, 50, 9, 99) /* unknown key */,
                                  process(6, 60, 9, 0) /* no cgroup */};
  ProcessSelectionOptions options;
  options.top_n = 1;
  options.max_cgroups = 2;
  const ProcessSection s = select_processes(all, 65530, options, Names().namer());
  ASSERT_EQ(s.cgroups.size(), 2u);
  EXPECT_EQ(s.dropped_cgroups, 1u);  // /c, the least memory
  EXPECT_EQ(s.unknown_cgroup_processes, 2u);
  EXPECT_EQ(s.cgroups[0].cgroup, "/b");  // most resident memory first
  EXPECT_EQ(s.cgroups[0].rss_anon_bytes, 5000u);
  const CgroupProcessTotals& a = s.cgroups[1];
  EXPECT_EQ(a.cgroup, "/a");
  EXPECT_EQ(a.processes, 2u);
  EXPECT_EQ(a.map_count, 30u);
  EXPECT_EQ(a.rss_anon_bytes, 300u);
  EXPECT_EQ(a.rss_file_bytes, 20u);
  EXPECT_EQ(a.rss_shmem_bytes, 2u);
  EXPECT_EQ(a.swap_bytes, 10u);
}

ProcessMaps promised(int pid, std::uint64_t committed, std::uint64_t rss_anon, std::uint64_t cgroup_key) {
  ProcessMaps p = process(pid, 10, rss_anon, cgroup_key);
  p.committed_private_bytes = committed;
  return p;
}

TEST(ProcessSelection, UnbackedPromiseIsCommittedLessAnonAndSwapFlooredAtZero) {
  ProcessMaps p = promised(1, 1000, 300, 1);  // swap_bytes is 5
  EXPECT_EQ(p.unbacked_promise_bytes(), 695u);
  p.rss_anon_bytes = 999;  // more resident than promised (COW copies of file pages): not negative
  EXPECT_EQ(p.unbacked_promise_bytes(), 0u);
}

TEST(ProcessSelection, TopByUnbackedPromiseAndNodeAndCgroupSums) {
  std::vector<ProcessMaps> all;
  for (int pid = 100; pid < 120; ++pid) all.push_back(promised(pid, 0, 1000, 1));  // promised nothing
  all.push_back(promised(500, 8ull << 30, 1 << 20, 2));  // the big holder, little resident
  all.push_back(promised(501, 1ull << 30, 1 << 30, 2));  // promised and all of it resident
  all.push_back(promised(502, 2ull << 20, 1 << 20, 3));  // a small holder
  ProcessSelectionOptions options;
  options.top_n = 2;
  const ProcessSection s = select_processes(all, 65530, options, Names().namer());

  ASSERT_NE(find(s, 500), nullptr);
  EXPECT_TRUE(find(s, 500)->selected_for & kTopUnbacked);
  EXPECT_EQ(find(s, 500)->committed_private_bytes, 8ull << 30);
  EXPECT_EQ(find(s, 500)->unbacked_promise_bytes, (8ull << 30) - (1 << 20) - 5);
  ASSERT_NE(find(s, 502), nullptr);
  EXPECT_TRUE(find(s, 502)->selected_for & kTopUnbacked);
  // 501 holds nothing unbacked: in the selection for its resident memory only.
  ASSERT_NE(find(s, 501), nullptr);
  EXPECT_EQ(find(s, 501)->selected_for, kTopResident);
  // Processes that promised nothing are no holders, however low their pids.
  for (int pid = 100; pid < 120; ++pid) {
    if (const SelectedProcess* p = find(s, pid)) {
      EXPECT_FALSE(p->selected_for & kTopUnbacked) << pid;
    }
  }

  const std::uint64_t unbacked_500 = (8ull << 30) - (1 << 20) - 5;
  const std::uint64_t unbacked_502 = (2ull << 20) - (1 << 20) - 5;
  EXPECT_EQ(s.unbacked_promise_bytes, unbacked_500 + unbacked_502);
  EXPECT_EQ(s.committed_private_bytes, (8ull << 30) + (1ull << 30) + (2ull << 20));
  auto cgroup = [&](const char* path) {
    auto it = std::find_if(s.cgroups.begin(), s.cgroups.end(), [&](const CgroupProcessTotals& c) { return c.cgroup == path; });
    return it == s.cgroups.end() ? nullptr : &*it;
  };
  ASSERT_NE(cgroup("/b"), nullptr);
  EXPECT_EQ(cgroup("/b")->committed_private_bytes, (8ull << 30) + (1ull << 30));
  EXPECT_EQ(cgroup("/b")->unbacked_promise_bytes, unbacked_500);  // 501 adds 0, not a negative
  ASSERT_NE(cgroup("/c"), nullptr);
  EXPECT_EQ(cgroup("/c")->unbacked_promise_bytes, unbacked_502);
  ASSERT_NE(cgroup("/a"), nullptr);
  EXPECT_EQ(cgroup("/a")->unbacked_promise_bytes, 0u);
}

TEST(ProcessSelection, UnchargedReservationsAreNoHoldersAndStayOutOfThePromiseSums) {
  std::vector<ProcessMaps> all;
  all.push_back(promised(600, 1ull << 40, 1 << 20, 2));    // 1 TiB of MAP_NORESERVE: more than Committed_AS
  all.push_back(promised(601, 6ull << 30, 1 << 20, 2));    // 6 GiB: not past the charge, past the node's unbacked
  all.push_back(promised(602, 3ull << 30, 1ull << 30, 2)); // a real holder: 2 GiB unbacked
  all.push_back(promised(603, 1ull << 30, 0, 3));          // a real holder: 1 GiB unbacked
  ProcessSelectionOptions options;
  options.top_n = 3;
  options.commit_charge_bytes = 8ull << 30;
  options.node_unbacked_bytes = 5ull << 30;
  const ProcessSection s = select_processes(all, 65530, options, Names().namer());

  EXPECT_EQ(s.uncharged_reservation_processes, 2u);
  EXPECT_EQ(s.uncharged_reservation_bytes, (1ull << 40) + (6ull << 30));
  // Still selected (they are the largest by nothing but resident memory here), never as holders.
  for (int pid : {600, 601}) {
    if (const SelectedProcess* p = find(s, pid)) {
      EXPECT_TRUE(p->uncharged_reservation) << pid;
      EXPECT_FALSE(p->selected_for & kTopUnbacked) << pid;
    }
  }
  ASSERT_NE(find(s, 602), nullptr);
  EXPECT_TRUE(find(s, 602)->selected_for & kTopUnbacked);
  EXPECT_FALSE(find(s, 602)->uncharged_reservation);
  ASSERT_NE(find(s, 603), nullptr);
  EXPECT_TRUE(find(s, 603)->selected_for & kTopUnbacked);
  const std::uint64_t unbacked_602 = (2ull << 30) - 5;
  const std::uint64_t unbacked_603 = (1ull << 30) - 5;
  EXPECT_EQ(s.unbacked_promise_bytes, unbacked_602 + unbacked_603);
  EXPECT_EQ(s.committed_private_bytes, (3ull << 30) + (1ull << 30));
  auto b = std::find_if(s.cgroups.begin(), s.cgroups.end(), [](const CgroupProcessTotals& c) { return c.cgroup == "/b"; });
  ASSERT_NE(b, s.cgroups.end());
  EXPECT_EQ(b->unbacked_promise_bytes, unbacked_602);
  EXPECT_EQ(b->committed_private_bytes, 3ull << 30);
  EXPECT_EQ(b->processes, 3u) << "still counted as processes, and their resident memory too";
  // RssAnon is summed over every process, reservations or not (copy-on-write sharing needs all).
  EXPECT_EQ(s.rss_anon_bytes, (1ull << 20) + (1ull << 20) + (1ull << 30));

  // Without the node's figures nobody is told apart.
  const ProcessSection plain = select_processes(all, 65530, ProcessSelectionOptions{}, Names().namer());
  EXPECT_EQ(plain.uncharged_reservation_processes, 0u);
  EXPECT_TRUE(find(plain, 600)->selected_for & kTopUnbacked);
}

TEST(ProcessSelection, CgroupCapKeepsTheLargestPromiseHoldersAsWellAsTheLargestResident) {
  // Ten cgroups with much resident memory and no promise, two with little resident memory and
  // large unbacked promises. A cap of 4 by resident memory alone would keep none of the two.
  Names names;
  std::vector<ProcessMaps> all;
  for (int i = 0; i < 10; ++i) {
    names.paths[10 + i] = "/resident" + std::to_string(i);
    all.push_back(promised(100 + i, 0, (100u + i) << 20, 10 + i));
  }
  names.paths[30] = "/holder-big";
  names.paths[31] = "/holder-small";
  all.push_back(promised(300, 8ull << 30, 1 << 20, 30));
  all.push_back(promised(301, 1ull << 30, 1 << 20, 31));
  ProcessSelectionOptions options;
  options.max_cgroups = 4;
  const ProcessSection s = select_processes(all, 65530, options, names.namer());

  ASSERT_EQ(s.cgroups.size(), 4u);
  EXPECT_EQ(s.dropped_cgroups, 8u);
  std::vector<std::string> kept;
  for (const CgroupProcessTotals& c : s.cgroups) kept.push_back(c.cgroup);
  // Taken in turn: the top two by resident memory, the two promise holders; in resident order.
  EXPECT_EQ(kept, (std::vector<std::string>{"/resident9", "/resident8", "/holder-big", "/holder-small"}));

  // With fewer holders than half the cap, the rest goes to resident memory.
  options.max_cgroups = 6;
  const ProcessSection wider = select_processes(all, 65530, options, names.namer());
  kept.clear();
  for (const CgroupProcessTotals& c : wider.cgroups) kept.push_back(c.cgroup);
  EXPECT_EQ(kept, (std::vector<std::string>{"/resident9", "/resident8", "/resident7", "/resident6", "/holder-big",
                                            "/holder-small"}));
}

TEST(ProcessSelection, NothingAboveThresholdWithoutALimitAndEmptyScans) {
  const ProcessSection empty = select_processes({}, 65530, {}, Names().namer());
  EXPECT_EQ(empty.processes, 0u);
  EXPECT_TRUE(empty.selected.empty());
  EXPECT_EQ(empty.ratio_cumulative.back(), 0u);
  const ProcessSection no_limit = select_processes({process(1, 10, 1)}, 0, {}, Names().namer());
  EXPECT_EQ(no_limit.above_threshold, 0u);
  EXPECT_EQ(no_limit.map_areas_ratio_max, 0);
}

TEST(ProcessSelection, CommandNamesBecomeValidLabelValues) {
  std::vector<ProcessMaps> all = {process(1, 10, 1, 1, "ok-name"), process(2, 10, 1, 1, "bad\xff\x01name"),
                                  process(3, 10, 1, 1, "caf\xc3\xa9"), process(4, 10, 1, 1, "cut\xe2\x82"),
                                  process(5, 10, 1, 1, "\xed\xa0\x80x\xe0\x80\x80")};
  const ProcessSection s = select_processes(all, 65530, {}, Names().namer());
  EXPECT_EQ(find(s, 1)->comm, "ok-name");
  EXPECT_EQ(find(s, 2)->comm, "bad??name");
  EXPECT_EQ(find(s, 3)->comm, "caf\xc3\xa9");  // valid UTF-8 stays
  EXPECT_EQ(find(s, 4)->comm, "cut??");        // a sequence cut short by the 15-byte limit
  EXPECT_EQ(find(s, 5)->comm, "???x???");      // a surrogate and an overlong form: well formed, not valid
}

TEST(Utf8, SequenceLengthFollowsRfc3629) {
  using utf8::sequence_length;
  EXPECT_EQ(sequence_length("a"), 1u);
  EXPECT_EQ(sequence_length("\xc3\xa9"), 2u);
  EXPECT_EQ(sequence_length("\xc1\xbf"), 0u);              // overlong 2-byte
  EXPECT_EQ(sequence_length("\xe0\x9f\xbf"), 0u);          // overlong 3-byte
  EXPECT_EQ(sequence_length("\xe0\xa0\x80"), 3u);          // U+0800
  EXPECT_EQ(sequence_length("\xed\x9f\xbf"), 3u);          // U+D7FF
  EXPECT_EQ(sequence_length("\xed\xa0\x80"), 0u);          // U+D800, a surrogate
  EXPECT_EQ(sequence_length("\xf0\x8f\xbf\xbf"), 0u);      // overlong 4-byte
  EXPECT_EQ(sequence_length("\xf0\x90\x80\x80"), 4u);      // U+10000
  EXPECT_EQ(sequence_length("\xf4\x8f\xbf\xbf"), 4u);      // U+10FFFF
  EXPECT_EQ(sequence_length("\xf4\x90\x80\x80"), 0u);      // above U+10FFFF
  EXPECT_EQ(sequence_length("\xf5\x80\x80\x80"), 0u);
  EXPECT_EQ(sequence_length("\xe2\x82"), 0u);              // cut short
  EXPECT_EQ(utf8::to_valid("a\x01\xff" "b"), "a\x01?b");
  EXPECT_EQ(utf8::to_valid("a\x01\xff" "b", /*no_controls=*/true), "a??b");
}

TEST(ProcessSelection, ThreadStacksAndPrivateFileMapsReadFromMapsAreNoPromise) {
  std::vector<ProcessMaps> all;
  all.push_back(promised(700, 9ull << 30, 0, 2));  // 8 GiB of it thread stacks, 512 MiB a private file map
  all.push_back(promised(701, 4ull << 30, 0, 3));  // a real holder
  all.push_back(promised(702, 2ull << 30, 0, 3));
  ProcessSelectionOptions options;
  options.top_n = 1;
  options.commit_charge_bytes = 100ull << 30;
  options.node_unbacked_bytes = 50ull << 30;
  // Before the maps are read, 700 is the largest holder: the first candidate.
  const auto candidates = promise_candidates(all, options, 2);
  ASSERT_EQ(candidates.size(), 2u);
  EXPECT_EQ(all[candidates[0]].pid, 700);
  EXPECT_EQ(all[candidates[1]].pid, 701);

  all[0].thread_stack_bytes = 8ull << 30;
  all[0].private_file_bytes = 512ull << 20;
  all[0].not_due_read = true;
  EXPECT_EQ(all[0].unbacked_promise_bytes(), (512ull << 20) - 5);  // swap_bytes is 5
  const ProcessSection s = select_processes(all, 65530, options, Names().namer());
  // The holder named is the one whose promise can come due.
  ASSERT_NE(find(s, 701), nullptr);
  EXPECT_TRUE(find(s, 701)->selected_for & kTopUnbacked);
  const SelectedProcess* stacks = find(s, 700);
  if (stacks != nullptr) {
    EXPECT_FALSE(stacks->selected_for & kTopUnbacked);
    EXPECT_EQ(stacks->thread_stack_bytes, 8ull << 30);
  }
  EXPECT_EQ(s.not_due_processes, 1u);
  EXPECT_EQ(s.not_due_thread_stack_bytes, 8ull << 30);
  EXPECT_EQ(s.not_due_private_file_bytes, 512ull << 20);
  EXPECT_EQ(s.committed_private_bytes, 15ull << 30);  // the commit charge is the kernel's, whole
  EXPECT_EQ(s.unbacked_promise_bytes, (512ull << 20) - 5 + (4ull << 30) - 5 + (2ull << 30) - 5);
  // Reservations are never candidates.
  options.commit_charge_bytes = 3ull << 30;
  const auto charged = promise_candidates(all, options, 3);
  ASSERT_EQ(charged.size(), 1u);
  EXPECT_EQ(all[charged[0]].pid, 702);
}

}  // namespace
}  // namespace memdiag
