// SPDX-License-Identifier: Apache-2.0
// Windows's memory figures in the snapshot's terms (windows/figures/memory_figures.hpp), from
// values shaped like a real host's and like wine's, natively on Linux.
#include <gtest/gtest.h>

#include "windows/figures/memory_figures.hpp"

namespace memdiag::windows {
namespace {

constexpr std::uint64_t kPage = 4096;
constexpr std::uint64_t kGiB = 1ull << 30;

// A 16 GiB host with a 4 GiB page file: CommitLimit ~ 20 GiB, 12 GiB charged, 6 GiB available.
PerformanceCounts host() {
  PerformanceCounts p;
  p.page_size_bytes = kPage;
  p.physical_total_pages = 16 * kGiB / kPage;
  p.physical_available_pages = 6 * kGiB / kPage;
  p.commit_limit_pages = 20 * kGiB / kPage;
  p.commit_total_pages = 12 * kGiB / kPage;
  p.commit_peak_pages = 14 * kGiB / kPage;
  p.system_cache_pages = 3 * kGiB / kPage;
  p.kernel_paged_pages = 300ull * (1 << 20) / kPage;
  p.kernel_nonpaged_pages = 200ull * (1 << 20) / kPage;
  p.process_count = 150;
  p.thread_count = 2000;
  p.handle_count = 60000;
  return p;
}

TEST(WindowsMemoryFigures, AHostsCountsInBytesAndTheCommitAccount) {
  MemoryStatusCounts status;
  status.memory_load_percent = 62;
  const auto r = memory_reading(host(), status);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->system.physical_total_bytes, 16 * kGiB);
  EXPECT_EQ(r->system.physical_available_bytes, 6 * kGiB);
  EXPECT_EQ(*r->system.commit_charge_bytes, 12 * kGiB);
  EXPECT_EQ(*r->system.commit_limit_bytes, 20 * kGiB);
  EXPECT_FALSE(r->system.commit_backed_bytes) << "Windows backs every commit it grants";
  // The page file: the limit less RAM; none of the charge is beyond RAM, so all of it may be free.
  EXPECT_EQ(r->system.swap_total_bytes, 4 * kGiB);
  EXPECT_EQ(r->system.swap_free_bytes, 4 * kGiB);
  EXPECT_EQ(r->windows.commit_peak_bytes, 14 * kGiB);
  EXPECT_EQ(r->windows.system_cache_bytes, 3 * kGiB);
  EXPECT_EQ(r->windows.kernel_paged_pool_bytes, 300ull << 20);
  EXPECT_EQ(r->windows.kernel_nonpaged_pool_bytes, 200ull << 20);
  EXPECT_EQ(r->windows.memory_load_percent, 62u);
  EXPECT_EQ(r->windows.processes, 150u);
  EXPECT_EQ(r->windows.threads, 2000u);
  EXPECT_EQ(r->windows.handles, 60000u);
}

TEST(WindowsMemoryFigures, ChargeBeyondRamBoundsThePageFileFree) {
  PerformanceCounts p = host();
  p.commit_total_pages = 19 * kGiB / kPage;  // 3 GiB beyond RAM: at most 1 GiB of page file free
  const auto r = memory_reading(p, std::nullopt);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->system.swap_free_bytes, 1 * kGiB);
  EXPECT_FALSE(r->windows.memory_load_percent);
  p.commit_total_pages = 21 * kGiB / kPage;  // past the limit (a reading taken mid-change): 0, not a wrap
  EXPECT_EQ(memory_reading(p, std::nullopt)->system.swap_free_bytes, 0u);
  p.commit_limit_pages = 8 * kGiB / kPage;  // no page file, some RAM kept back: no swap at all
  EXPECT_EQ(memory_reading(p, std::nullopt)->system.swap_total_bytes, 0u);
}

// Wine gives the peak, the cache and the pools as 0; physical memory may come from the memory
// status where GetPerformanceInfo has none.
TEST(WindowsMemoryFigures, WinesZerosAreTakenAndPhysicalMemoryFallsBackToTheStatus) {
  PerformanceCounts p = host();
  p.commit_peak_pages = p.system_cache_pages = p.kernel_paged_pages = p.kernel_nonpaged_pages = 0;
  p.physical_total_pages = p.physical_available_pages = 0;
  MemoryStatusCounts status;
  status.total_physical_bytes = 16 * kGiB;
  status.available_physical_bytes = 5 * kGiB;
  const auto r = memory_reading(p, status);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->system.physical_total_bytes, 16 * kGiB);
  EXPECT_EQ(r->system.physical_available_bytes, 5 * kGiB);
  EXPECT_EQ(r->windows.commit_peak_bytes, 0u);
}

TEST(WindowsMemoryFigures, ImpossibleReadingsAreRefusedWithTheReason) {
  PerformanceCounts p = host();
  p.page_size_bytes = 0;
  EXPECT_NE(memory_reading(p, std::nullopt).error().message.find("page size 0"), std::string::npos);
  p.page_size_bytes = 3000;
  EXPECT_FALSE(memory_reading(p, std::nullopt));
  p = host();
  p.commit_total_pages = ~0ull;  // garbage: would wrap when multiplied
  EXPECT_NE(memory_reading(p, std::nullopt).error().message.find("overflows"), std::string::npos);
  p = host();
  p.physical_total_pages = 0;
  EXPECT_NE(memory_reading(p, std::nullopt).error().message.find("no physical memory"), std::string::npos);
  p = host();
  p.physical_available_pages = p.physical_total_pages + 1;
  EXPECT_FALSE(memory_reading(p, std::nullopt));
  p = host();
  p.commit_limit_pages = 0;
  EXPECT_FALSE(memory_reading(p, std::nullopt));
  MemoryStatusCounts status;
  status.memory_load_percent = 101;
  EXPECT_FALSE(memory_reading(host(), status));
}

}  // namespace
}  // namespace memdiag::windows
