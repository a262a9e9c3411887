// SPDX-License-Identifier: Apache-2.0
// OsRelease on Windows: MEM_DECOMMIT of each range, one call per range (Windows has no batched
// form). Decommitting, rather than DiscardVirtualMemory or MEM_RESET, gives back the commit
// charge as well as the memory: on Windows the commit limit is always enforced, and commit
// charge that freed spans keep is what runs a long single-process run into it (seed 000). The
// page heap recommits a released span before handing it out again
// (AddressReservation::recommit).
#include <windows.h>

#include "probes/canary/os_release.hpp"

namespace memdiag::alloc::detail {

OsRelease::OsRelease() noexcept = default;
OsRelease::~OsRelease() = default;

void OsRelease::add(void* p, std::size_t bytes) noexcept {
  ranges_[queued_++] = iovec{p, bytes};
  if (queued_ == kBatch) flush();
}

void OsRelease::flush() noexcept {
  for (std::size_t i = 0; i < queued_; ++i) {
    system_calls_.fetch_add(1, std::memory_order_relaxed);
    ::VirtualFree(ranges_[i].iov_base, ranges_[i].iov_len, MEM_DECOMMIT);
  }
  queued_ = 0;
}

}  // namespace memdiag::alloc::detail
