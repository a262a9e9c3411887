// SPDX-License-Identifier: Apache-2.0
#include "probes/canary/canary_cycle.hpp"

#ifndef _WIN32
#include <unistd.h>
#endif

#include <array>
#include <chrono>

namespace memdiag::canary {
namespace {

// Portable (the Windows canary runs cycles too): steady_clock is CLOCK_MONOTONIC on Linux and
// QueryPerformanceCounter on Windows, both well under a microsecond to read.
std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

// At most this many blocks per cycle: the block list lives on the stack, so a cycle allocates
// nothing but the working set itself (16 MiB in 4 KiB..1 MiB blocks needs ~90).
constexpr std::size_t kMaxBlocks = 4096;

}  // namespace

void run_cycle(alloc::SizeClassAllocator& allocator, std::size_t working_set_bytes, CanaryReading& reading) {
  // The OS's page, so every timed first touch is a fault of its own (64 KiB on some arm64
  // kernels); Windows's is 4 KiB on x64 and arm64.
#ifdef _WIN32
  constexpr std::size_t page = 4096;
#else
  static const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
#endif
  std::array<void*, kMaxBlocks> blocks;
  std::size_t count = 0;
  bool failed = false;
  const std::uint64_t cycle_start = now_ns();
  // Cycle through the block sizes so every class is exercised every cycle.
  for (std::size_t taken = 0, k = 0; working_set_bytes - taken >= page && count < kMaxBlocks; ++k) {
    // The next size in turn, or the largest that still fits: the cycle never asks for more
    // than the working set (the allocator's ceiling is checked against it).
    std::size_t size = kBlockSizes[k % std::size(kBlockSizes)];
    for (std::size_t i = std::size(kBlockSizes); size > working_set_bytes - taken && i-- > 0;) size = kBlockSizes[i];
    if (size > working_set_bytes - taken) break;
    void* p = allocator.allocate(size, page);
    if (p == nullptr) {
      failed = true;
      break;
    }
    blocks[count++] = p;
    taken += size;
    auto* bytes = static_cast<volatile unsigned char*>(p);
    for (std::size_t off = 0; off < size; off += page) {
      const std::uint64_t before = now_ns();
      bytes[off] = 1;  // the first write to a page not resident: one page fault
      reading.page_fault.record(now_ns() - before);
    }
  }
  const std::uint64_t cycle_ns = now_ns() - cycle_start;
  for (std::size_t i = 0; i < count; ++i) allocator.deallocate(blocks[i]);
  allocator.release_unused();
  if (failed) {
    ++reading.failures;
    return;
  }
  reading.cycle.record(cycle_ns);
  ++reading.cycles;
}

}  // namespace memdiag::canary
