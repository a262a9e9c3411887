// SPDX-License-Identifier: Apache-2.0
#include "probes/canary/page_heap.hpp"

#include <chrono>
#include <iterator>
#include <limits>
#include <new>

namespace memdiag::alloc::detail {
namespace {

// The reservation is committed in chunks of this much: few mmap calls, and commit charge (under
// vm.overcommit_memory=2) taken a little ahead of need only.
constexpr std::size_t kCommitChunkPages = (16u << 20) / kPageSize;
// Span records are carved a page at a time: small heaps touch little bookkeeping.
constexpr std::size_t kSpanRecordsPerChunk = kPageSize / sizeof(Span);

}  // namespace

PageHeap::PageHeap(std::size_t reserve_bytes, std::size_t ceiling_bytes, bool huge_pages,
                   bool lock_metadata) noexcept
    : reservation_(reserve_bytes, huge_pages),
      map_(reserve_bytes / kPageSize, lock_metadata),
      // Worst case one span record and one index node per page: ~140 bytes per 4 KiB page.
      metadata_(reserve_bytes / 16, lock_metadata),
      ceiling_pages_((ceiling_bytes + kPageSize - 1) / kPageSize) {
  // The first commit of each reservation splits it into two mappings; done here, so that no
  // allocation pattern, not even the first one, changes the process's mapping count. (It costs
  // commit charge, 16 MiB, but no memory until touched.)
  if (ok()) {
    std::lock_guard lock(mu_);
    grow(1);
  }
}

PageHeap::~PageHeap() = default;

std::int64_t PageHeap::now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Span* PageHeap::new_span_record() noexcept {
  if (spare_records_ == nullptr) {
    auto* records = static_cast<Span*>(metadata_.allocate_pages(kSpanRecordsPerChunk * sizeof(Span)));
    if (records == nullptr) return nullptr;
    for (std::size_t i = 0; i < kSpanRecordsPerChunk; ++i) recycle_span_record(new (&records[i]) Span);
  }
  Span* s = spare_records_;
  spare_records_ = s->next;
  *s = Span{};
  return s;
}

void* PageHeap::allocate_metadata_pages(std::size_t bytes) noexcept {
  std::lock_guard lock(mu_);
  return metadata_.allocate_pages(bytes);
}

void PageHeap::recycle_span_record(Span* s) noexcept {
  s->next = spare_records_;
  spare_records_ = s;
}

PageHeap::SizeIndex& PageHeap::index_for(SpanState state) noexcept {
  return state == SpanState::kFreeDirty ? dirty_index_ : clean_index_;
}

PageHeap::SmallIndex& PageHeap::small_index_for(SpanState state) noexcept {
  return state == SpanState::kFreeDirty ? dirty_small_ : clean_small_;
}

void PageHeap::index_insert(Span* s, SpanState state) noexcept {
  ++free_span_count_;
  if (s->pages <= kSmallSpanPages) {
    SmallIndex& small = small_index_for(state);
    small.by_pages[s->pages].push_back(s);
    small.nonempty[s->pages / 64] |= std::uint64_t{1} << (s->pages % 64);
  } else {
    index_for(state).emplace(s->pages, s->first_page);
  }
}

void PageHeap::index_erase(Span* s, SpanState state) noexcept {
  --free_span_count_;
  if (s->pages <= kSmallSpanPages) {
    SmallIndex& small = small_index_for(state);
    small.by_pages[s->pages].remove(s);
    if (small.by_pages[s->pages].empty()) {
      small.nonempty[s->pages / 64] &= ~(std::uint64_t{1} << (s->pages % 64));
    }
  } else {
    index_for(state).erase({s->pages, s->first_page});
  }
}

void PageHeap::set_edges(Span* s) noexcept {
  map_.set_span(s->first_page, s);
  map_.set_span(s->first_page + s->pages - 1, s);
}

void PageHeap::insert_free(Span* s, SpanState state, std::int64_t freed_at) noexcept {
  s->state = state;
  s->size_class = 0;
  s->freed_at_ns = freed_at;
  set_edges(s);
  index_insert(s, state);
  if (state == SpanState::kFreeDirty) {
    dirty_by_age_.push_back(s);
    dirty_pages_ += s->pages;
  } else {
    clean_pages_ += s->pages;
  }
}

void PageHeap::remove_free(Span* s) noexcept {
  index_erase(s, s->state);
  if (s->state == SpanState::kFreeDirty) {
    dirty_by_age_.remove(s);
    dirty_pages_ -= s->pages;
  } else {
    clean_pages_ -= s->pages;
  }
}

// Merges s with free neighbours of the same kind, then indexes it. Every committed page is in
// exactly one span whose first and last pages point to it, so the neighbours are one lookup away.
void PageHeap::insert_free_coalesced(Span* s, SpanState state, std::int64_t freed_at) noexcept {
  if (s->first_page > 0) {
    Span* left = map_.span(s->first_page - 1);
    if (left != nullptr && left->state == state) {
      remove_free(left);
      s->first_page = left->first_page;
      s->pages += left->pages;
      recycle_span_record(left);
    }
  }
  const std::size_t end = s->first_page + s->pages;
  if (end < committed_pages_) {
    Span* right = map_.span(end);
    if (right != nullptr && right->state == state) {
      remove_free(right);
      s->pages += right->pages;
      recycle_span_record(right);
    }
  }
  insert_free(s, state, freed_at);
}

Span* PageHeap::take_best_fit(SpanState state, std::size_t pages) noexcept {
  if (pages <= kSmallSpanPages) {
    SmallIndex& small = small_index_for(state);
    for (std::size_t word = pages / 64; word < std::size(small.nonempty); ++word) {
      std::uint64_t bits = small.nonempty[word];
      if (word == pages / 64) bits &= ~std::uint64_t{0} << (pages % 64);
      if (bits != 0) {
        Span* s = small.by_pages[word * 64 + static_cast<std::size_t>(__builtin_ctzll(bits))].front();
        remove_free(s);
        return s;
      }
    }
  }
  SizeIndex& index = index_for(state);
  auto it = index.lower_bound({pages, 0});
  if (it == index.end()) return nullptr;
  Span* s = map_.span(it->second);
  remove_free(s);
  return s;
}

bool PageHeap::grow(std::size_t pages) noexcept {
  std::size_t chunk = (pages + kCommitChunkPages - 1) / kCommitChunkPages * kCommitChunkPages;
  const std::size_t room = reservation_.size() / kPageSize - committed_pages_;
  if (chunk > room) chunk = room;
  if (chunk < pages) return false;
  if (!reservation_.commit_more(chunk * kPageSize) &&
      (chunk == pages || !reservation_.commit_more(pages * kPageSize))) {
    return false;
  }
  const std::size_t added = reservation_.committed() / kPageSize - committed_pages_;
  Span* s = new_span_record();
  if (s == nullptr) return false;  // the pages stay committed, unused; the next grow retries
  s->first_page = committed_pages_;
  s->pages = added;
  committed_pages_ += added;
  insert_free_coalesced(s, SpanState::kFreeClean, 0);
  return true;
}

Span* PageHeap::carve(Span* s, SpanState from, std::size_t pages, std::size_t align_pages,
                      std::uint8_t size_class) noexcept {
  // Alignment is of the address, and the base is only page aligned.
  const std::size_t base_page = reservation_.base() / kPageSize;
  std::size_t start = s->first_page;
  if (align_pages > 1) {
    start = ((base_page + start + align_pages - 1) / align_pages) * align_pages - base_page;
  }
  const std::size_t end = start + pages;
  const std::size_t span_end = s->first_page + s->pages;
  // The cut-off pieces keep their kind; a dirty piece counts as freed now (its neighbour was just
  // reused), which keeps the age list in order.
  const std::int64_t freed_at = from == SpanState::kFreeDirty ? now_ns() : 0;
  if (start > s->first_page) {
    Span* lead = new_span_record();
    if (lead == nullptr) {
      insert_free(s, from, s->freed_at_ns);
      return nullptr;
    }
    lead->first_page = s->first_page;
    lead->pages = start - s->first_page;
    insert_free(lead, from, freed_at);
  }
  if (end < span_end) {
    Span* trail = new_span_record();
    if (trail == nullptr) {
      s->first_page = start;
      s->pages = span_end - start;
      insert_free(s, from, s->freed_at_ns);
      return nullptr;
    }
    trail->first_page = end;
    trail->pages = span_end - end;
    insert_free(trail, from, freed_at);
  }
  s->first_page = start;
  s->pages = pages;
  s->state = SpanState::kInUse;
  s->size_class = size_class;
  s->allocated = 0;
  s->carved = 0;
  s->free_objects = nullptr;
  s->prev = s->next = nullptr;
  if (size_class != 0) {
    for (std::size_t p = start; p < end; ++p) {
      map_.set_span(p, s);
      map_.set_class(p, size_class);
    }
  } else {
    set_edges(s);
    map_.set_class(start, 0);
  }
  in_use_pages_ += pages;
  return s;
}

Span* PageHeap::allocate(std::size_t pages, std::size_t align_pages, std::uint8_t size_class,
                         bool* hit_ceiling) noexcept {
  *hit_ceiling = false;
  if (pages == 0) return nullptr;
  if (align_pages == 0) align_pages = 1;
  const std::size_t need = pages + align_pages - 1;
  if (need < pages) return nullptr;
  std::lock_guard lock(mu_);
  if (Span* s = take_best_fit(SpanState::kFreeDirty, need)) {
    return carve(s, SpanState::kFreeDirty, pages, align_pages, size_class);
  }
  // Only clean pages add to held bytes.
  if (ceiling_pages_ != 0 && in_use_pages_ + dirty_pages_ + pages > ceiling_pages_) {
    *hit_ceiling = true;
    return nullptr;
  }
  Span* s = take_best_fit(SpanState::kFreeClean, need);
  if (s == nullptr) {
    if (!grow(need)) return nullptr;
    s = take_best_fit(SpanState::kFreeClean, need);
    if (s == nullptr) return nullptr;
  }
  Span* carved = carve(s, SpanState::kFreeClean, pages, align_pages, size_class);
  if (carved == nullptr) return nullptr;
  // A clean span may have been released: on Windows its pages were decommitted and must be
  // committed again (a no-op on Linux). Windows pays one VirtualAlloc per clean span taken, on
  // this slow path only, released or not: cheaper than tracking which were. At the commit limit
  // the span goes back, clean.
  const std::uintptr_t start = reservation_.base() + carved->first_page * kPageSize;
  if (!reservation_.recommit(start, carved->pages * kPageSize)) {
    in_use_pages_ -= carved->pages;
    insert_free_coalesced(carved, SpanState::kFreeClean, 0);
    return nullptr;
  }
  return carved;
}

void PageHeap::deallocate(Span* span) noexcept {
  std::lock_guard lock(mu_);
  in_use_pages_ -= span->pages;
  span->allocated = 0;
  span->carved = 0;
  span->free_objects = nullptr;
  insert_free_coalesced(span, SpanState::kFreeDirty, now_ns());
}

bool PageHeap::has_dirty_pages() const noexcept {
  std::lock_guard lock(mu_);
  return dirty_pages_ != 0;
}

std::size_t PageHeap::release(std::int64_t freed_before_ns) noexcept {
  std::lock_guard release_lock(release_mu_);
  std::size_t bytes = 0;
  const std::uintptr_t base = reservation_.base();
  // Batches of up to kReleaseBatch spans: bounded memory, and the heap's lock is free while the
  // kernel zaps pages (~0.4 us per 4 KiB page here, 100 ms per GiB).
  for (;;) {
    std::size_t n = 0;
    {
      std::lock_guard lock(mu_);
      while (n < kReleaseBatch && !dirty_by_age_.empty() &&
             dirty_by_age_.front()->freed_at_ns <= freed_before_ns) {
        Span* s = dirty_by_age_.front();
        dirty_by_age_.remove(s);
        index_erase(s, SpanState::kFreeDirty);
        s->state = SpanState::kReleasing;  // in no index: nobody merges with it or takes it
        releasing_[n++] = s;
      }
    }
    if (n == 0) break;
    std::size_t batch_bytes = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const Span* s = releasing_[i];
      os_release_.add(reinterpret_cast<void*>(base + s->first_page * kPageSize), s->pages * kPageSize);
      batch_bytes += s->pages * kPageSize;
    }
    os_release_.flush();
    std::lock_guard lock(mu_);
    for (std::size_t i = 0; i < n; ++i) {
      dirty_pages_ -= releasing_[i]->pages;  // held until the kernel has the pages back
      insert_free_coalesced(releasing_[i], SpanState::kFreeClean, 0);
    }
    released_bytes_total_ += batch_bytes;
    bytes += batch_bytes;
  }
  return bytes;
}

std::size_t PageHeap::mappings() const noexcept {
  std::lock_guard lock(mu_);
  return reservation_.mappings() + (map_.ok() ? 1 : 0) + metadata_.mappings();
}

PageHeapCounters PageHeap::counters() const {
  std::lock_guard lock(mu_);
  PageHeapCounters c;
  c.in_use_pages = in_use_pages_;
  c.dirty_free_pages = dirty_pages_;
  c.clean_free_pages = clean_pages_;
  c.committed_bytes = reservation_.committed();
  c.reserved_bytes = reservation_.size() + (map_.ok() ? map_.pages() * (sizeof(Span*) + 1) : 0) +
                     metadata_.reserved();
  c.released_bytes_total = released_bytes_total_;
  c.release_system_calls_total = os_release_.system_calls();
  c.commit_calls_total = reservation_.mmap_calls() + metadata_.mmap_calls();
  c.reservation_mappings = reservation_.mappings() + (map_.ok() ? 1 : 0) + metadata_.mappings();
  c.metadata_committed_bytes = metadata_.committed();
  c.free_spans = free_span_count_;
  c.metadata_locked = metadata_locked();
  return c;
}

}  // namespace memdiag::alloc::detail
