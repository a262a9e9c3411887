// SPDX-License-Identifier: Apache-2.0
// Touching a long-lived thread's stack once when it starts. With the daemon's memory locked on
// fault (daemon/privileges/memory_lock.hpp) the touched pages then stay resident, so the thread
// does not fault its own stack in when it is needed under pressure.
#pragma once

#include <cstddef>

namespace memdiag {

// Touches `bytes` (at most 512 KiB) of the calling thread's stack below this frame.
__attribute__((noinline)) inline void prefault_stack(std::size_t bytes = 128 * 1024) {
  constexpr std::size_t kMax = 512 * 1024;
  if (bytes > kMax) bytes = kMax;
  volatile char* area = static_cast<volatile char*>(__builtin_alloca(bytes));
  for (std::size_t i = 0; i < bytes; i += 4096) area[i] = 0;
}

}  // namespace memdiag
