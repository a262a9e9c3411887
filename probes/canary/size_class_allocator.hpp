// SPDX-License-Identifier: Apache-2.0
// memdiag's size-class allocator, a library usable on its own and the engine of the
// daemon's canary. Two seed incidents shaped it:
//   - an allocator whose freed spans never lowered its "held" bytes hit its 8 GB ceiling: here
//     held bytes are always true, a ceiling first releases free spans, then fails cleanly;
//   - an allocator that munmap()ed pieces of kernel-merged mappings ran out of
//     vm.max_map_count: here memory goes back with madvise() inside reserved regions, never by
//     munmap of pieces or mprotect, so the number of mappings stays bounded whatever the frees.
// Requests are rounded to size classes served from spans carved out of large reserved regions;
// large requests take whole spans; thread-local caches keep the fast path free of locks.
//
// Layout (one concept per file): size_classes.hpp (classes, span sizes, batch sizes),
// address_reservation (the PROT_NONE reservation committed contiguously), page_map.hpp
// (pointer -> span and size class), span.hpp, page_heap (free spans, coalescing, release),
// os_release (batched MADV_DONTNEED), central_free_list (per class and thread shard), thread_cache
// (per thread, lock free), decay_thread (background release), metadata_arena.hpp (bookkeeping
// outside malloc), asan_poison.hpp.
//
// Thread safety: every member function may be called from any thread concurrently, except the
// destructor. Memory may be freed by a thread other than the one that allocated it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

#include "probes/canary/asan_poison.hpp"
#include "probes/canary/size_classes.hpp"
#include "probes/canary/thread_cache.hpp"

namespace memdiag::alloc {

struct AllocatorOptions {
  // Held bytes (touched, not returned to the OS) never exceed this; 0 = no ceiling. At the
  // ceiling the allocator first returns free spans to the OS, then fails (nullptr).
  std::size_t process_ceiling_bytes = 0;
  // The same per size class (small objects only); 0 = none.
  std::size_t class_ceiling_bytes = 0;
  // Free memory idle this long goes back to the OS without any call, from a background thread.
  // Default well under 1 s so that "returned within 1 s idle" holds.
  std::chrono::milliseconds decay{500};
  bool background_decay = true;
  // Address space reserved up front (PROT_NONE: no memory, no commit charge). Everything the
  // allocator ever hands out lives in it; raised to twice the process ceiling when that is larger.
  std::size_t reserve_bytes = std::size_t{64} << 30;
  // Ask for transparent huge pages on the heap (MADV_HUGEPAGE; matters when THP is in "madvise"
  // mode). Releasing then zaps 2 MiB entries: measured 3-4 ms per GiB instead of 120-180 ms
  // with 4 KiB pages. Off by default: small heaps grow by 2 MiB at a time (RSS), a first touch may
  // stall in compaction, and the canary wants to time ordinary 4 KiB page faults.
  bool transparent_huge_pages = false;
  // Keep the allocator's own bookkeeping (page map, span records) resident once touched
  // (mlock2 MLOCK_ONFAULT), so that freeing or allocating never waits on a major fault of its
  // metadata. RLIMIT_MEMLOCK is charged ~9 bytes per reserved page plus the bookkeeping arena's
  // committed part: keep reserve_bytes small with it (the canary reserves 2 x its ceiling).
  bool lock_metadata = false;
};

struct ClassStats {
  std::size_t object_size = 0;
  std::size_t live_bytes = 0;
  std::size_t held_bytes = 0;    // spans owned by the class
  std::size_t cached_bytes = 0;  // free objects sitting in thread caches
};

struct AllocatorStats {
  std::size_t live_bytes = 0;        // requested by callers and not freed (rounded to classes)
  std::size_t held_bytes = 0;        // touched by the allocator's spans and not returned to the OS
  std::size_t reserved_bytes = 0;    // address space reserved
  std::uint64_t released_bytes_total = 0;  // returned to the OS since start
  // Mappings it owns as the kernel lists them: heap reservation (committed part, rest), page map,
  // bookkeeping reservation (committed part, rest): 5 at most, whatever the allocation pattern.
  std::size_t mappings = 0;
  std::uint64_t ceiling_hits_total = 0;    // allocations that met a ceiling (released or failed)
  std::uint64_t failed_allocations_total = 0;
  std::vector<ClassStats> classes;
  // Beyond the sketch:
  std::size_t committed_bytes = 0;     // read-write part of the reservation (commit charge)
  std::size_t free_held_bytes = 0;     // held in free spans, waiting for decay or release
  std::size_t large_live_bytes = 0;    // live bytes of large objects (whole pages)
  std::size_t free_spans = 0;          // free page runs (dirty and clean) after coalescing
  std::uint64_t mmap_calls_total = 0;  // reservation, page map, commits (merged into one mapping)
  std::uint64_t release_system_calls_total = 0;  // process_madvise / madvise calls
  std::size_t thread_caches = 0;
  std::size_t metadata_bytes = 0;      // committed for span records, the free-span index, a stack
  bool metadata_locked = false;        // lock_metadata asked and every mlock2 succeeded
};

class SizeClassAllocator {
 public:
  explicit SizeClassAllocator(const AllocatorOptions& options = {});
  ~SizeClassAllocator();  // unmaps everything it reserved
  SizeClassAllocator(const SizeClassAllocator&) = delete;
  SizeClassAllocator& operator=(const SizeClassAllocator&) = delete;

  // nullptr when a ceiling or the OS refuses. alignment: a power of two.
  void* allocate(std::size_t size, std::size_t alignment = alignof(std::max_align_t)) noexcept;
  void deallocate(void* p) noexcept;  // nullptr is fine
  // Like realloc(), with 16-byte alignment for a moved block; size 0 frees p and returns nullptr.
  void* reallocate(void* p, std::size_t size) noexcept;
  // The usable size of a live allocation.
  std::size_t usable_size(const void* p) const noexcept;

  // Returns every free span's memory to the OS now, after flushing the calling thread's cache;
  // the bytes released. Other threads' caches stay, as they do for the decay thread: the
  // fast paths touch them without a lock, so only their owners can empty them. That is at most
  // two batches per class (~32 KiB; 128 KiB for the 8..32 KiB classes), 1.36 MiB per thread if
  // every class were full, held until the thread's next call that takes a slow path, its
  // exit, or its next free after the process ceiling was met.
  std::size_t release_unused() noexcept;

  AllocatorStats stats() const;
  // stats().metadata_locked without gathering the rest: cheap enough for every sample.
  bool metadata_locked() const noexcept;

 private:
  void* allocate_slow(std::size_t size, std::size_t alignment) noexcept;
  void deallocate_slow(void* p) noexcept;

  struct Impl;
  std::unique_ptr<Impl> impl_;
  // Copies of what the inline fast paths need, so they never reach into Impl.
  std::uint64_t id_ = 0;
  std::uintptr_t base_ = 0;
  std::size_t reserved_bytes_ = 0;
  const std::uint8_t* page_classes_ = nullptr;
};

// Fast paths: a small request with default alignment, or a small object freed, with a thread
// cache for this instance in slot 0 of the calling thread's table. No lock, no atomic RMW.
inline void* SizeClassAllocator::allocate(std::size_t size, std::size_t alignment) noexcept {
  if (size <= detail::kMaxSmallSize && alignment <= detail::kSmallAlignment) [[likely]] {
    const detail::ThreadCacheSlot& slot = detail::tls_cache_slots[0];
    if (slot.owner_id == id_) [[likely]] {
      const unsigned size_class = detail::size_class_of(size);
      detail::ThreadFreeList& list = slot.cache->lists[size_class];
      if (void* p = list.head; p != nullptr) [[likely]] {
        list.head = detail::load_link(p);
        list.length.store(list.length.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
        detail::unpoison(p, detail::kClassSize[size_class]);
        return p;
      }
    }
  }
  return allocate_slow(size, alignment);
}

inline void SizeClassAllocator::deallocate(void* p) noexcept {
  // A pointer below the base wraps to a huge offset: the slow path sorts out nullptr and strays.
  const std::uintptr_t offset = reinterpret_cast<std::uintptr_t>(p) - base_;
  if (offset < reserved_bytes_) [[likely]] {
    const unsigned size_class = page_classes_[offset >> detail::kPageShift];
    const detail::ThreadCacheSlot& slot = detail::tls_cache_slots[0];
    if (size_class != 0 && slot.owner_id == id_) [[likely]] {
      detail::ThreadFreeList& list = slot.cache->lists[size_class];
      const std::uint32_t length = list.length.load(std::memory_order_relaxed);
      if (length < list.max_length.load(std::memory_order_relaxed)) [[likely]] {
        detail::store_link(p, list.head, detail::kClassSize[size_class]);
        list.head = p;
        list.length.store(length + 1, std::memory_order_relaxed);
        return;
      }
    }
  }
  deallocate_slow(p);
}

// The C++ interface: throws std::bad_alloc where allocate() returns nullptr.
template <class T>
struct StlAllocator {
  using value_type = T;
  SizeClassAllocator* owner;
  explicit StlAllocator(SizeClassAllocator& a) noexcept : owner(&a) {}
  template <class U>
  StlAllocator(const StlAllocator<U>& other) noexcept : owner(other.owner) {}
  T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_alloc();
    void* p = owner->allocate(n * sizeof(T), alignof(T));
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t) noexcept { owner->deallocate(p); }
  template <class U>
  bool operator==(const StlAllocator<U>& other) const noexcept { return owner == other.owner; }
};

}  // namespace memdiag::alloc
