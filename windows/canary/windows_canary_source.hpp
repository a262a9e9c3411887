// SPDX-License-Identifier: Apache-2.0
// The canary on Windows: the same cycle as Linux's (probes/canary/canary_cycle.hpp:
// allocate a working set across size classes from the canary's own allocator, now on its Windows
// page layer, time the first touch of every page, free it and give it back with MEM_DECOMMIT so
// the next cycle faults again), every `interval` on a thread of the daemon's own. Linux runs it
// in a child process started with fork/exec; Windows has neither, and the cycle needs no
// isolation here (the daemon has no memory cgroup to stay out of).
//
// It must never add to a crisis: while the low-memory resource notification is signaled (the
// memory manager is trimming working sets), due cycles are skipped and counted, as Linux's
// canary skips them while PSI full is high. Source name "canary", as on Linux, so the same
// series (memdiag_canary_*, memdiag_allocator_*) and the stall model's slow_faults work on both.
#pragma once

#include <memory>

#include "probes/canary/canary_settings.hpp"
#include "probes/core/source_registration.hpp"

namespace memdiag::windows {

SourceRegistration windows_canary_registration();

}  // namespace memdiag::windows
