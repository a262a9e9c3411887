// SPDX-License-Identifier: Apache-2.0
// The size-class allocator on its Windows page layer (VirtualAlloc reserve and commit, memory
// returned with MEM_DECOMMIT), run under wine: the seed incident's pattern (seed 000, ONNX
// Runtime's single-process test run that met its allocator's 8 GB ceiling), what a release
// does to the pages as VirtualQuery reports them, and that released pages work again.
#include <windows.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "probes/canary/size_class_allocator.hpp"

namespace memdiag::alloc {
namespace {

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMiB = 1024 * kKiB;
constexpr std::size_t kGiB = 1024 * kMiB;
constexpr std::size_t kPage = 4096;

void touch_pages(void* p, std::size_t bytes) {
  auto* at = static_cast<volatile char*>(p);
  for (std::size_t i = 0; i < bytes; i += kPage) at[i] = 1;
  at[bytes - 1] = 1;
}

void touch_ends(void* p, std::size_t bytes) {
  auto* at = static_cast<volatile char*>(p);
  at[0] = 1;
  at[bytes - 1] = 1;
}

// The state of the page at `p`: MEM_COMMIT, MEM_RESERVE or MEM_FREE.
DWORD page_state(const void* p) {
  MEMORY_BASIC_INFORMATION info{};
  if (::VirtualQuery(p, &info, sizeof info) == 0) return 0;
  return info.State;
}

// Seed 000: thousands of test cases in one process, each allocating tensors of many sizes and
// freeing them all when it ends, under an 8 GiB ceiling. 1500 cases of ~12 MiB of tensors, and
// a 256 MiB model every fifth, ask for ~90 GiB over the run, ten times the ceiling: an allocator
// whose freed spans kept counting as held (the seed's) fails part-way; this one reuses and
// releases them and never meets the ceiling. Each tensor's first and last page are written
// (its header and its end): writing every page would cost minutes under wine and prove
// nothing more about the ceiling, which counts spans, not pages.
TEST(WindowsAllocator, TheSeedsSingleProcessRunNeverMeetsTheCeiling) {
  AllocatorOptions options;
  options.process_ceiling_bytes = 8 * kGiB;
  options.reserve_bytes = 16 * kGiB;  // what the canary reserves: twice its ceiling
  SizeClassAllocator a(options);
  std::mt19937_64 random(2026);
  std::uniform_real_distribution<double> log_size(4.0, 22.5);  // 16 B .. ~6 MiB, log-uniform
  std::uint64_t asked = 0;
  std::size_t max_held = 0;
  std::vector<void*> tensors;
  for (int test_case = 0; test_case < 1500; ++test_case) {
    std::size_t case_bytes = 0;
    while (case_bytes < 12 * kMiB) {
      const auto size = static_cast<std::size_t>(std::exp2(log_size(random)));
      void* p = a.allocate(size);
      ASSERT_NE(p, nullptr) << "case " << test_case << ", " << size << " bytes, after " << asked << " bytes asked";
      touch_ends(p, size);
      tensors.push_back(p);
      case_bytes += size;
    }
    // Every fifth case also loads a "model": one 256 MiB block.
    if (test_case % 5 == 0) {
      void* model = a.allocate(256 * kMiB);
      ASSERT_NE(model, nullptr) << "case " << test_case;
      touch_ends(model, 256 * kMiB);
      tensors.push_back(model);
      case_bytes += 256 * kMiB;
    }
    asked += case_bytes;
    for (void* p : tensors) a.deallocate(p);
    tensors.clear();
    max_held = std::max(max_held, a.stats().held_bytes);
  }
  const AllocatorStats s = a.stats();
  EXPECT_GT(asked, 8 * options.process_ceiling_bytes);
  EXPECT_EQ(s.failed_allocations_total, 0u);
  EXPECT_EQ(s.ceiling_hits_total, 0u);
  EXPECT_EQ(s.live_bytes, 0u);
  // One case's worth, not the run's: freed spans are reused.
  EXPECT_LT(max_held, 1 * kGiB);
}

// A release decommits (VirtualQuery: MEM_RESERVE, so the commit charge is given back, not only
// the memory); the same pages, handed out again, are committed again and read as zeros.
TEST(WindowsAllocator, ReleasedPagesAreDecommittedThenCommittedAgainOnReuse) {
  AllocatorOptions options;
  options.background_decay = false;
  SizeClassAllocator a(options);
  void* block = a.allocate(64 * kMiB);
  ASSERT_NE(block, nullptr);
  std::memset(block, 0x5a, 64 * kMiB);
  EXPECT_EQ(page_state(block), static_cast<DWORD>(MEM_COMMIT));
  a.deallocate(block);
  EXPECT_GE(a.stats().held_bytes, 64 * kMiB);  // freed, dirty, still held

  const std::size_t released = a.release_unused();
  EXPECT_GE(released, 64 * kMiB);
  EXPECT_EQ(page_state(block), static_cast<DWORD>(MEM_RESERVE));
  EXPECT_EQ(page_state(static_cast<char*>(block) + 32 * kMiB), static_cast<DWORD>(MEM_RESERVE));
  const AllocatorStats after_release = a.stats();
  EXPECT_LT(after_release.held_bytes, 64 * kMiB);
  EXPECT_GE(after_release.released_bytes_total, 64 * kMiB);
  EXPECT_GE(after_release.release_system_calls_total, 1u);

  // Best fit hands the same clean span out again: committed, zeroed, writable.
  void* again = a.allocate(64 * kMiB);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again, block);  // the released span itself, so this is the recommit at work
  EXPECT_EQ(page_state(again), static_cast<DWORD>(MEM_COMMIT));
  const auto* bytes = static_cast<const unsigned char*>(again);
  EXPECT_EQ(bytes[0], 0);
  EXPECT_EQ(bytes[64 * kMiB - 1], 0);
  std::memset(again, 0x33, 64 * kMiB);
  a.deallocate(again);
  EXPECT_EQ(a.stats().failed_allocations_total, 0u);
}

// At the ceiling, freed memory that cannot serve the request (holes between live blocks) is
// released, decommitted, to make room, rather than the request failing.
TEST(WindowsAllocator, AtTheCeilingFreedHolesAreDecommittedRatherThanTheRequestFailing) {
  AllocatorOptions options;
  options.background_decay = false;
  options.process_ceiling_bytes = 64 * kMiB;
  SizeClassAllocator a(options);
  std::vector<void*> blocks;
  for (void* p; blocks.size() <= 64 && (p = a.allocate(kMiB)) != nullptr;) {
    touch_pages(p, kMiB);
    blocks.push_back(p);
  }
  ASSERT_EQ(blocks.size(), 64u);
  EXPECT_EQ(a.stats().failed_allocations_total, 1u);
  // Every other block freed: 32 MiB held in 1 MiB holes, none of which fits 16 MiB.
  for (std::size_t i = 0; i < blocks.size(); i += 2) a.deallocate(blocks[i]);
  void* big = a.allocate(16 * kMiB);
  ASSERT_NE(big, nullptr);
  touch_pages(big, 16 * kMiB);
  const AllocatorStats s = a.stats();
  EXPECT_GE(s.ceiling_hits_total, 2u);
  EXPECT_GE(s.released_bytes_total, 16 * kMiB);
  EXPECT_LE(s.held_bytes, 64 * kMiB);
  EXPECT_EQ(s.failed_allocations_total, 1u);
  // Some freed hole was decommitted (the ones not reused are MEM_RESERVE now).
  std::size_t decommitted = 0;
  for (std::size_t i = 0; i < blocks.size(); i += 2) decommitted += page_state(blocks[i]) == MEM_RESERVE ? 1 : 0;
  EXPECT_GE(decommitted, 1u);
  for (std::size_t i = 1; i < blocks.size(); i += 2) a.deallocate(blocks[i]);
  a.deallocate(big);
  EXPECT_EQ(a.stats().live_bytes, 0u);
}

// Four threads allocating and freeing across each other, with the background decay releasing
// under them: every object keeps its bytes, nothing fails.
TEST(WindowsAllocator, ThreadsAndTheDecayThreadShareItSafely) {
  AllocatorOptions options;
  options.decay = std::chrono::milliseconds(5);
  SizeClassAllocator a(options);
  std::vector<std::thread> threads;
  std::atomic<int> corrupt{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&a, &corrupt, t] {
      std::mt19937 random(static_cast<unsigned>(t));
      std::vector<std::pair<unsigned char*, std::size_t>> live;
      for (int i = 0; i < 20000; ++i) {
        if (live.size() < 64 && (random() & 1)) {
          const std::size_t size = 16u << (random() % 14);  // 16 B .. 128 KiB
          auto* p = static_cast<unsigned char*>(a.allocate(size));
          if (p == nullptr) {
            ++corrupt;
            continue;
          }
          std::memset(p, static_cast<int>(size & 0xff), size);
          live.emplace_back(p, size);
        } else if (!live.empty()) {
          const auto [p, size] = live.back();
          live.pop_back();
          if (p[0] != static_cast<unsigned char>(size & 0xff) || p[size - 1] != p[0]) ++corrupt;
          a.deallocate(p);
        }
      }
      for (const auto& [p, size] : live) a.deallocate(p);
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(corrupt.load(), 0);
  EXPECT_EQ(a.stats().live_bytes, 0u);
}

}  // namespace
}  // namespace memdiag::alloc
