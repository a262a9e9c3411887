// SPDX-License-Identifier: Apache-2.0
// One large range of address space, reserved PROT_NONE and committed from its start
// (address_reservation.cpp; on Windows MEM_RESERVE and MEM_COMMIT, address_reservation_win32.cpp).
//
// Why this shape: a PROT_NONE, MAP_NORESERVE reservation costs no commit charge, even under
// vm.overcommit_memory=2, and committing grows one read-write mapping contiguously
// (mmap(MAP_FIXED) of the next chunk, same flags, so the kernel merges it with the previous one).
// The process therefore sees two mappings for the whole reservation, whatever the allocation and
// free pattern: memory goes back to the OS with madvise() inside the committed part, never by
// munmap() of pieces or mprotect(), which would split it into one mapping per hole.
#pragma once

#include <cstddef>
#include <atomic>
#include <cstdint>

namespace memdiag::alloc::detail {

class AddressReservation {
 public:
  // huge_pages: committed chunks are madvise(MADV_HUGEPAGE)d (for THP "madvise" mode).
  // lock_on_fault: committed chunks are mlock2(MLOCK_ONFAULT)ed, so what gets touched stays
  // resident and nothing is populated ahead. Every chunk gets the same flags, so they still
  // merge into one mapping.
  explicit AddressReservation(std::size_t bytes, bool huge_pages = false, bool lock_on_fault = false) noexcept;
  ~AddressReservation();  // unmaps the whole range (the only munmap it ever makes)
  AddressReservation(const AddressReservation&) = delete;
  AddressReservation& operator=(const AddressReservation&) = delete;

  bool ok() const noexcept { return base_ != 0; }
  std::uintptr_t base() const noexcept { return base_; }
  std::size_t size() const noexcept { return size_; }
  std::size_t committed() const noexcept { return committed_; }
  // Makes the next `bytes` (a multiple of the page size) after the committed part read-write.
  // false when the reservation is exhausted or the kernel refuses (commit limit).
  bool commit_more(std::size_t bytes) noexcept;
  // Makes [at, at + bytes), inside the committed part and released since (OsRelease), usable
  // again before it is handed out. Linux: nothing to do (MADV_DONTNEED leaves pages mapped, to
  // read as zeros). Windows: MEM_COMMIT again after MEM_DECOMMIT; false at the commit limit.
  bool recommit(std::uintptr_t at, std::size_t bytes) noexcept;
  // Mappings as the kernel lists them: the committed part and the remaining reservation.
  std::size_t mappings() const noexcept {
    // A chunk that could not be locked differs in flags from the locked ones: one more mapping
    // (at least; counted once, a lower bound).
    return ok() ? (committed_ > 0 ? 1 : 0) + (committed_ < size_ ? 1 : 0) + (lock_failed_ ? 1 : 0) : 0;
  }
  std::uint64_t mmap_calls() const noexcept { return mmap_calls_; }
  // With lock_on_fault: whether every committed chunk could be locked (RLIMIT_MEMLOCK).
  // Safe from any thread.
  bool locked() const noexcept { return lock_on_fault_ && !lock_failed_.load(std::memory_order_relaxed); }

 private:
  std::uintptr_t base_ = 0;
  std::size_t size_ = 0;
  std::size_t committed_ = 0;
  std::uint64_t mmap_calls_ = 0;
  bool huge_pages_ = false;
  bool lock_on_fault_ = false;
  std::atomic<bool> lock_failed_{false};
};

}  // namespace memdiag::alloc::detail
