// SPDX-License-Identifier: Apache-2.0
// Windows processes in the OS-neutral section (windows/figures/process_figures.hpp): the
// bounded selection and the mapping of Windows's counters, natively on Linux.
#include <gtest/gtest.h>

#include "windows/figures/process_figures.hpp"

namespace memdiag::windows {
namespace {

constexpr std::uint64_t kMiB = 1 << 20;

ProcessCounters process(std::uint32_t pid, std::string name, std::uint64_t working_set_mib, std::uint64_t private_mib,
                        std::optional<std::uint64_t> private_ws_mib = std::nullopt) {
  ProcessCounters c;
  c.pid = pid;
  c.image_name = std::move(name);
  c.working_set_bytes = working_set_mib * kMiB;
  c.peak_working_set_bytes = 2 * working_set_mib * kMiB;
  c.private_bytes = private_mib * kMiB;
  if (private_ws_mib) c.private_working_set_bytes = *private_ws_mib * kMiB;
  c.page_faults = pid * 10;
  return c;
}

TEST(WindowsProcessFigures, TopByWorkingSetTopByPrivateBytesAndSelfOrderedByPid) {
  const std::vector<ProcessCounters> all = {
      process(4, "System", 1, 0),
      process(100, "chrome.exe", 900, 300),   // largest working set
      process(200, "onnx_test.exe", 50, 8000, 40),  // the seed's: 8 GB charged, little resident
      process(300, "idle.exe", 5, 5),
      process(400, "memdiagd.exe", 10, 12),
  };
  const auto s = process_memory(all, 7, ProcessSelection{1, 400});
  EXPECT_EQ(s.total_processes, 7u) << "two listed processes could not be opened";
  ASSERT_EQ(s.processes.size(), 3u);
  EXPECT_EQ(s.processes[0].pid, 100);
  EXPECT_EQ(s.processes[1].pid, 200);
  EXPECT_EQ(s.processes[2].pid, 400);
  const ProcessMemory& onnx = s.processes[1];
  EXPECT_EQ(onnx.name, "onnx_test.exe");
  EXPECT_EQ(onnx.resident_bytes, 50 * kMiB);
  EXPECT_EQ(*onnx.committed_private_bytes, 8000 * kMiB);
  EXPECT_EQ(*onnx.unbacked_promise_bytes, (8000 - 40) * kMiB);
  EXPECT_EQ(*onnx.peak_resident_bytes, 100 * kMiB);
  EXPECT_EQ(*onnx.page_faults_total, 2000u);
  EXPECT_FALSE(onnx.map_areas);
  EXPECT_EQ(onnx.swap_bytes, 0u);
  EXPECT_FALSE(s.processes[0].unbacked_promise_bytes) << "without EX2 the private working set is unknown";
}

TEST(WindowsProcessFigures, BoundedHoweverManyProcessesAndTiesByPid) {
  std::vector<ProcessCounters> all;
  for (std::uint32_t pid = 1000; pid < 3000; ++pid) all.push_back(process(pid, "w.exe", 10, 10));
  const auto s = process_memory(all, all.size(), ProcessSelection{10, 0});
  ASSERT_EQ(s.processes.size(), 10u) << "the same ten lead both lists on a tie";
  EXPECT_EQ(s.processes.front().pid, 1000);
  EXPECT_EQ(s.processes.back().pid, 1009);
  EXPECT_EQ(s.total_processes, 2000u);
  EXPECT_TRUE(process_memory({}, 0, ProcessSelection{}).processes.empty());
}

}  // namespace
}  // namespace memdiag::windows
