// SPDX-License-Identifier: Apache-2.0
// AddressReservation on Windows: VirtualAlloc(MEM_RESERVE) of the whole range (address space
// only: no commit charge, no memory), MEM_COMMIT of chunks from its start, and MEM_RELEASE of
// the whole range at the end, the only way Windows frees a reservation. Nothing is ever freed
// piecemeal: pages go back with MEM_DECOMMIT (os_release_win32.cpp) and come back with
// recommit(). Huge pages and lock-on-fault have no Windows counterpart here (large pages need
// SeLockMemoryPrivilege and are never paged): the flags are accepted and do nothing.
#include <windows.h>

#include "probes/canary/address_reservation.hpp"

namespace memdiag::alloc::detail {

AddressReservation::AddressReservation(std::size_t bytes, bool huge_pages, bool lock_on_fault) noexcept
    : huge_pages_(huge_pages), lock_on_fault_(lock_on_fault) {
  void* p = ::VirtualAlloc(nullptr, bytes, MEM_RESERVE, PAGE_NOACCESS);
  if (p == nullptr) return;
  base_ = reinterpret_cast<std::uintptr_t>(p);
  size_ = bytes;
  mmap_calls_ = 1;
}

AddressReservation::~AddressReservation() {
  if (ok()) ::VirtualFree(reinterpret_cast<void*>(base_), 0, MEM_RELEASE);
}

bool AddressReservation::commit_more(std::size_t bytes) noexcept {
  if (!ok() || bytes > size_ - committed_) return false;
  // Fails when the commit charge would pass the commit limit: Windows enforces it always.
  if (::VirtualAlloc(reinterpret_cast<void*>(base_ + committed_), bytes, MEM_COMMIT, PAGE_READWRITE) == nullptr) {
    return false;
  }
  ++mmap_calls_;
  committed_ += bytes;
  return true;
}

bool AddressReservation::recommit(std::uintptr_t at, std::size_t bytes) noexcept {
  // Committing pages that are committed already is a no-op that succeeds; decommitted ones
  // take commit charge again and read as zeros.
  return ::VirtualAlloc(reinterpret_cast<void*>(at), bytes, MEM_COMMIT, PAGE_READWRITE) != nullptr;
}

}  // namespace memdiag::alloc::detail
