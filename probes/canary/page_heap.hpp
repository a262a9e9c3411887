// SPDX-License-Identifier: Apache-2.0
// The page heap: every page of the reservation's committed part belongs to exactly one span,
// in use or free. It hands out page runs (small-object spans for the central lists, whole spans
// for large objects), coalesces freed runs with their free neighbours, and returns free runs to
// the OS with madvise(MADV_DONTNEED), so a freed span lowers "held" bytes the moment it is
// released: the seed incident's allocator never did, and hit its 8 GB ceiling.
//
// Free spans are dirty (touched, still held) or clean (released, or never touched). The two
// never merge, so held bytes stay exact: allocation prefers dirty spans (no page faults, no
// growth), then clean ones, then commits more of the reservation. Within a kind it takes the
// smallest span that fits: spans of up to kSmallSpanPages pages sit in a list per exact size
// (O(1), with a bitmap of the non-empty lists: the Zig pattern frees 100,000 two-page spans),
// larger ones in an ordered set, lowest address first among equals, which keeps fragmentation
// and the committed frontier low. Dirty spans are also kept in the order they were freed, so
// decay releases the oldest first without scanning.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "probes/canary/address_reservation.hpp"
#include "probes/canary/metadata_arena.hpp"
#include "probes/canary/os_release.hpp"
#include "probes/canary/page_map.hpp"
#include "probes/canary/size_classes.hpp"
#include "probes/canary/span.hpp"

namespace memdiag::alloc::detail {

struct PageHeapCounters {
  std::size_t in_use_pages = 0;
  std::size_t dirty_free_pages = 0;
  std::size_t clean_free_pages = 0;
  std::size_t committed_bytes = 0;
  std::size_t reserved_bytes = 0;
  std::uint64_t released_bytes_total = 0;
  std::uint64_t release_system_calls_total = 0;
  std::uint64_t commit_calls_total = 0;
  std::size_t reservation_mappings = 0;
  std::size_t free_spans = 0;
  std::size_t metadata_committed_bytes = 0;
  bool metadata_locked = false;  // page map and bookkeeping arena mlock()ed (on fault)
};

class PageHeap {
 public:
  // lock_metadata: the page map and the bookkeeping arena stay resident once touched.
  PageHeap(std::size_t reserve_bytes, std::size_t ceiling_bytes, bool huge_pages,
           bool lock_metadata = false) noexcept;
  ~PageHeap();
  PageHeap(const PageHeap&) = delete;
  PageHeap& operator=(const PageHeap&) = delete;

  bool ok() const noexcept { return reservation_.ok() && map_.ok() && metadata_.ok(); }
  std::uintptr_t base() const noexcept { return reservation_.base(); }
  std::size_t reserved_bytes() const noexcept { return reservation_.size(); }
  const PageMap& map() const noexcept { return map_; }
  // The page map and the bookkeeping arena are mlock()ed (lock_metadata); no lock taken.
  bool metadata_locked() const noexcept { return map_.locked() && metadata_.locked(); }

  // A span of `pages` pages whose address is a multiple of align_pages pages, marked in the page
  // map for `size_class` (0: a large object). nullptr when the reservation or the kernel refuses,
  // or, with *hit_ceiling set, when it would need more held bytes than the ceiling allows (the
  // caller releases what it can and asks again).
  Span* allocate(std::size_t pages, std::size_t align_pages, std::uint8_t size_class,
                 bool* hit_ceiling) noexcept;
  // Takes back an in-use span as dirty free memory.
  void deallocate(Span* span) noexcept;
  // Returns to the OS every dirty span freed at or before freed_before_ns (steady clock); the
  // bytes released. Concurrent callers are serialized; the madvise calls run without the heap's
  // lock, so allocation goes on meanwhile.
  std::size_t release(std::int64_t freed_before_ns) noexcept;
  bool has_dirty_pages() const noexcept;

  PageHeapCounters counters() const;
  std::size_t mappings() const noexcept;

  static std::int64_t now_ns() noexcept;
  // Page-aligned memory from the bookkeeping arena, never given back (the decay thread's stack).
  void* allocate_metadata_pages(std::size_t bytes) noexcept;

 private:
  static constexpr std::size_t kSmallSpanPages = 128;
  struct SmallIndex {
    SpanSizeList by_pages[kSmallSpanPages + 1];
    std::uint64_t nonempty[(kSmallSpanPages + 1 + 63) / 64] = {};
  };
  using SizeKey = std::pair<std::size_t, std::size_t>;  // (pages, first page)
  using SizeIndex = std::set<SizeKey, std::less<SizeKey>, ArenaStlAllocator<SizeKey>>;

  Span* new_span_record() noexcept;
  void recycle_span_record(Span* s) noexcept;
  SizeIndex& index_for(SpanState state) noexcept;
  SmallIndex& small_index_for(SpanState state) noexcept;
  void index_insert(Span* s, SpanState state) noexcept;
  void index_erase(Span* s, SpanState state) noexcept;
  void set_edges(Span* s) noexcept;
  void insert_free(Span* s, SpanState state, std::int64_t freed_at) noexcept;
  void remove_free(Span* s) noexcept;
  void insert_free_coalesced(Span* s, SpanState state, std::int64_t freed_at) noexcept;
  Span* take_best_fit(SpanState state, std::size_t pages) noexcept;
  bool grow(std::size_t pages) noexcept;
  Span* carve(Span* s, SpanState from, std::size_t pages, std::size_t align_pages,
              std::uint8_t size_class) noexcept;

  AddressReservation reservation_;
  PageMap map_;
  MetadataArena metadata_;
  const std::size_t ceiling_pages_;

  mutable std::mutex mu_;
  SizeIndex dirty_index_{ArenaStlAllocator<SizeKey>(&metadata_)};
  SizeIndex clean_index_{ArenaStlAllocator<SizeKey>(&metadata_)};
  SmallIndex dirty_small_;
  SmallIndex clean_small_;
  std::size_t free_span_count_ = 0;
  SpanList dirty_by_age_;
  std::size_t committed_pages_ = 0;
  std::size_t in_use_pages_ = 0;
  std::size_t dirty_pages_ = 0;  // includes spans being released right now
  std::size_t clean_pages_ = 0;
  std::uint64_t released_bytes_total_ = 0;
  Span* spare_records_ = nullptr;

  std::mutex release_mu_;  // one release at a time; guards the batch below
  OsRelease os_release_;
  static constexpr std::size_t kReleaseBatch = 1024;
  Span* releasing_[kReleaseBatch];
};

}  // namespace memdiag::alloc::detail
