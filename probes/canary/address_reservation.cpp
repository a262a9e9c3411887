// SPDX-License-Identifier: Apache-2.0
#include "probes/canary/address_reservation.hpp"

#include <sys/mman.h>

namespace memdiag::alloc::detail {

AddressReservation::AddressReservation(std::size_t bytes, bool huge_pages, bool lock_on_fault) noexcept
    : huge_pages_(huge_pages), lock_on_fault_(lock_on_fault) {
  void* p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return;
  base_ = reinterpret_cast<std::uintptr_t>(p);
  size_ = bytes;
  mmap_calls_ = 1;
}

AddressReservation::~AddressReservation() {
  if (ok()) munmap(reinterpret_cast<void*>(base_), size_);
}

bool AddressReservation::commit_more(std::size_t bytes) noexcept {
  if (!ok() || bytes > size_ - committed_) return false;
  // Same protection and flags for every chunk, so each merges into the previous one. No
  // MAP_NORESERVE: committed memory is accounted once, here, not at first touch.
  void* at = reinterpret_cast<void*>(base_ + committed_);
  void* p = mmap(at, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  if (p == MAP_FAILED) return false;
  ++mmap_calls_;
  // Explicitly either way: with THP "always" a region left alone gets 2 MiB pages, one fault
  // fills 512 of them, and the canary's per-page fault figure would mean nothing.
  madvise(p, bytes, huge_pages_ ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  // A failed lock leaves this chunk with other flags than the previous ones: one more mapping.
  if (lock_on_fault_ && mlock2(p, bytes, MLOCK_ONFAULT) != 0) lock_failed_.store(true, std::memory_order_relaxed);
  committed_ += bytes;
  return true;
}

bool AddressReservation::recommit(std::uintptr_t, std::size_t) noexcept { return true; }

}  // namespace memdiag::alloc::detail
