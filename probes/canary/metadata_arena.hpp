// SPDX-License-Identifier: Apache-2.0
// Where the allocator keeps its own bookkeeping (span records, the free-span index's nodes, the
// decay thread's stack): a reservation of its own, committed contiguously like the heap's, with a
// free list per 16-byte size. Not from malloc, so that
//   - the bookkeeping adds no mappings whatever the allocation pattern: a malloc from the decay
//     thread would make glibc create a new arena (two more mappings), and a thread stack from
//     pthread is two more (stack and guard page);
//   - it can be mlock()ed as one range by an embedder that wants it resident (the canary).
// Not thread safe: the page heap calls it under its lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>

#include "probes/canary/address_reservation.hpp"

namespace memdiag::alloc::detail {

class MetadataArena {
 public:
  // lock_on_fault: what the arena touches stays resident (see AddressReservation).
  explicit MetadataArena(std::size_t reserve_bytes, bool lock_on_fault = false) noexcept
      : reservation_(reserve_bytes, false, lock_on_fault) {}

  bool ok() const noexcept { return reservation_.ok(); }
  std::size_t committed() const noexcept { return reservation_.committed(); }
  std::size_t reserved() const noexcept { return reservation_.size(); }
  std::size_t mappings() const noexcept { return reservation_.mappings(); }
  std::uint64_t mmap_calls() const noexcept { return reservation_.mmap_calls(); }
  bool locked() const noexcept { return reservation_.locked(); }

  // bytes <= kMaxPooled come from a free list; nullptr when the reservation is exhausted.
  void* allocate(std::size_t bytes) noexcept {
    const std::size_t index = (bytes + 15) / 16;
    if (index < kLists && free_[index] != nullptr) {
      void* p = free_[index];
      free_[index] = *static_cast<void**>(p);
      return p;
    }
    return bump(index * 16, 16);
  }
  void deallocate(void* p, std::size_t bytes) noexcept {
    const std::size_t index = (bytes + 15) / 16;
    if (index >= kLists) return;  // large pieces (the stack) are never freed
    *static_cast<void**>(p) = free_[index];
    free_[index] = p;
  }
  // Page-aligned memory that is never given back (a thread stack).
  void* allocate_pages(std::size_t bytes) noexcept { return bump(bytes, 4096); }

 private:
  static constexpr std::size_t kLists = 17;  // up to 256 bytes
  static constexpr std::size_t kCommitChunk = std::size_t{1} << 20;

  void* bump(std::size_t bytes, std::size_t alignment) noexcept {
    std::size_t start = (used_ + alignment - 1) & ~(alignment - 1);
    if (start + bytes > reservation_.committed()) {
      const std::size_t need = start + bytes - reservation_.committed();
      const std::size_t chunk = (need + kCommitChunk - 1) / kCommitChunk * kCommitChunk;
      if (!reservation_.commit_more(chunk)) return nullptr;
    }
    used_ = start + bytes;
    return reinterpret_cast<void*>(reservation_.base() + start);
  }

  AddressReservation reservation_;
  std::size_t used_ = 0;
  void* free_[kLists] = {};
};

// An STL allocator over the arena, for the page heap's index (nodes of one size).
template <class T>
struct ArenaStlAllocator {
  using value_type = T;
  MetadataArena* arena;
  explicit ArenaStlAllocator(MetadataArena* a) noexcept : arena(a) {}
  template <class U>
  ArenaStlAllocator(const ArenaStlAllocator<U>& other) noexcept : arena(other.arena) {}
  T* allocate(std::size_t n) {
    void* p = arena->allocate(n * sizeof(T));
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) noexcept { arena->deallocate(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const ArenaStlAllocator<U>& other) const noexcept { return arena == other.arena; }
};

}  // namespace memdiag::alloc::detail
