// SPDX-License-Identifier: Apache-2.0
// One canary cycle: allocate a working set across size classes from the canary's own
// allocator, touch every page once timing each first touch (a page fault, since the previous
// cycle gave its pages back), free it all and return the memory to the OS so that the next
// cycle faults again. The figure is a direct reading of "how long does this node take to give
// a thread a page right now", the stall that froze the seed's training jobs.
#pragma once

#include <cstddef>

#include "probes/canary/size_class_allocator.hpp"
#include "probes/core/canary_section.hpp"

namespace memdiag::canary {

// Block sizes the working set is cut into, smallest first: whole pages of several classes, so
// every touched page belongs to one block and its first touch is its fault.
inline constexpr std::size_t kBlockSizes[] = {4096, 8192, 16384, 65536, 262144, 1048576};

// Runs one cycle of `working_set_bytes` (rounded down to whole pages) and adds its page-fault
// and cycle times to `reading`; counts a failure (and frees what it got) if an allocation fails.
void run_cycle(alloc::SizeClassAllocator& allocator, std::size_t working_set_bytes, CanaryReading& reading);

}  // namespace memdiag::canary
