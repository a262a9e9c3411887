// SPDX-License-Identifier: Apache-2.0
// What a canary child (canary_child.hpp) sends its parent after every due cycle: its cumulative
// reading, its allocator's stats and whether its bookkeeping is mlock()ed. The report crosses a
// pipe as raw bytes between two copies of the same binary, in one write of at most PIPE_BUF
// bytes, so the parent never reads half of one (checked in canary_child.cpp).
#pragma once

#include <type_traits>

#include "probes/core/canary_section.hpp"

namespace memdiag::canary {

struct CanaryChildReport {
  CanaryReading reading;
  CanaryAllocatorStats allocator;
  // The child's counters page and its allocator's bookkeeping are mlock()ed
  // (CanaryRunner::bookkeeping_locked); false: RLIMIT_MEMLOCK refused.
  bool bookkeeping_locked = false;
};

static_assert(std::is_trivially_copyable_v<CanaryChildReport>);

}  // namespace memdiag::canary
