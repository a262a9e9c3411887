// SPDX-License-Identifier: Apache-2.0
#include "probes/canary/size_class_allocator.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <mutex>

#include "probes/canary/central_free_list.hpp"
#include "probes/canary/decay_thread.hpp"
#include "probes/canary/page_heap.hpp"

namespace memdiag::alloc {

using detail::CentralFreeList;
using detail::kBatchSize;
using detail::kClassSize;
using detail::kNumClasses;
using detail::kPageShift;
using detail::kPageSize;
using detail::kSpanPages;
using detail::PageHeap;
using detail::Span;
using detail::SpanList;
using detail::ThreadCache;
using detail::ThreadFreeList;

namespace {

constexpr std::int64_t kReleaseEverything = std::numeric_limits<std::int64_t>::max();

std::size_t reservation_for(const AllocatorOptions& options) {
  std::size_t bytes = std::max(options.reserve_bytes, std::size_t{64} << 20);
  // Room for the ceiling twice over: fragmentation of the address space never limits first.
  if (options.process_ceiling_bytes > bytes / 2) bytes = options.process_ceiling_bytes * 2;
  return (bytes + kPageSize - 1) & ~(kPageSize - 1);
}

}  // namespace

struct SizeClassAllocator::Impl final : detail::ThreadCacheOwner {
  explicit Impl(const AllocatorOptions& o)
      : options(o), heap(reservation_for(o), o.process_ceiling_bytes, o.transparent_huge_pages, o.lock_metadata) {
    for (unsigned shard = 0; shard < kShards; ++shard) {
      for (unsigned c = 1; c < kNumClasses; ++c) central[shard][c].init(c, shard, &heap.map(), heap.base());
    }
  }

  // Thread caches -------------------------------------------------------------------------

  ThreadCache* cache_for_current_thread() noexcept {
    if (ThreadCache* cache = detail::find_thread_cache(id)) return cache;
    ThreadCache* cache = new (std::nothrow) ThreadCache;
    if (cache == nullptr) return nullptr;
    cache->owner_id = id;
    cache->shard = next_shard.fetch_add(1, std::memory_order_relaxed) % kShards;
    restore_limits(cache);
    {
      std::lock_guard lock(caches_mu);
      try {
        caches.push_back(cache);
      } catch (...) {
        delete cache;
        return nullptr;
      }
    }
    detail::install_thread_cache(cache);
    return cache;
  }

  // Returns the objects of one list to the central lists, `count` of them from its head.
  void flush_list(ThreadFreeList& list, unsigned size_class, std::uint32_t count) noexcept {
    void* batch[64];
    while (count > 0) {
      unsigned n = 0;
      while (n < 64 && n < count && list.head != nullptr) {
        batch[n++] = list.head;
        list.head = detail::load_link(list.head);
      }
      if (n == 0) break;
      list.length.store(list.length.load(std::memory_order_relaxed) - n, std::memory_order_relaxed);
      return_objects(size_class, batch, n);
      count -= n;
    }
  }

  void flush_cache(ThreadCache* cache) noexcept {
    for (unsigned c = 1; c < kNumClasses; ++c) {
      flush_list(cache->lists[c], c, cache->lists[c].length.load(std::memory_order_relaxed));
    }
  }

  static void restore_limits(ThreadCache* cache) noexcept {
    for (unsigned c = 1; c < kNumClasses; ++c) {
      cache->lists[c].max_length.store(2 * kBatchSize[c], std::memory_order_relaxed);
    }
  }

  // The owner's side of a drain request (see ThreadCache::drain_requested).
  void drain_if_requested(ThreadCache* cache) noexcept {
    if (!cache->drain_requested.load(std::memory_order_relaxed)) return;
    if (!cache->drain_requested.exchange(false, std::memory_order_acquire)) return;
    flush_cache(cache);
    restore_limits(cache);
  }

  // At the process ceiling: every other thread's cache drains at its owner's next free.
  void request_drain_of_other_threads() noexcept {
    ThreadCache* mine = detail::find_thread_cache(id);
    std::lock_guard lock(caches_mu);
    for (ThreadCache* cache : caches) {
      if (cache == mine) continue;
      cache->drain_requested.store(true, std::memory_order_release);
      for (unsigned c = 1; c < kNumClasses; ++c) cache->lists[c].max_length.store(0, std::memory_order_relaxed);
    }
  }

  void flush_current_thread_cache() noexcept {
    if (ThreadCache* cache = detail::find_thread_cache(id)) flush_cache(cache);
  }

  void retire_cache(ThreadCache* cache) noexcept override {
    flush_cache(cache);
    {
      std::lock_guard lock(caches_mu);
      caches.erase(std::remove(caches.begin(), caches.end(), cache), caches.end());
    }
    delete cache;
  }

  // Central lists and spans ---------------------------------------------------------------

  // Objects go back to the shard owning their span, which may not be the caller's (an object
  // freed by another thread than the one that allocated it). n <= 64.
  void return_objects(unsigned size_class, void* const* objects, unsigned n) noexcept {
    void* by_shard[kShards][64];
    unsigned count[kShards] = {};
    for (unsigned i = 0; i < n; ++i) {
      // The span cannot go away while one of its objects is out, and its shard never changes.
      const std::uintptr_t offset = reinterpret_cast<std::uintptr_t>(objects[i]) - heap.base();
      const Span* span = heap.map().span(offset >> kPageShift);
      by_shard[span->shard][count[span->shard]++] = objects[i];
    }
    SpanList emptied;
    for (unsigned shard = 0; shard < kShards; ++shard) {
      if (count[shard] != 0) central[shard][size_class].insert_batch(by_shard[shard], count[shard], emptied);
    }
    while (!emptied.empty()) {
      Span* span = emptied.front();
      emptied.remove(span);
      class_spans[size_class].count.fetch_sub(1, std::memory_order_relaxed);
      heap.deallocate(span);
    }
  }

  // Held by a class: its spans, counted before one is asked for, so that a per-class ceiling
  // holds across threads and shards.
  bool try_reserve_class_span(unsigned size_class) noexcept {
    std::atomic<std::size_t>& spans = class_spans[size_class].count;
    const std::size_t before = spans.fetch_add(1, std::memory_order_relaxed);
    const std::size_t ceiling = options.class_ceiling_bytes;
    if (ceiling != 0 && (before + 1) * kSpanPages[size_class] * kPageSize > ceiling) {
      spans.fetch_sub(1, std::memory_order_relaxed);
      return false;
    }
    return true;
  }

  // Up to n objects of the class from the shard; 0 when a ceiling or the OS refuses.
  unsigned fetch_objects(unsigned size_class, unsigned shard, void** out, unsigned n) noexcept {
    CentralFreeList& list = central[shard][size_class];
    if (unsigned got = list.remove_batch(out, n)) return got;
    // Empty spans never stay in a class, so at a class ceiling there is nothing to release there;
    // but other shards may have free objects.
    if (!try_reserve_class_span(size_class)) {
      ceiling_hits.fetch_add(1, std::memory_order_relaxed);
      for (unsigned other = 0; other < kShards; ++other) {
        if (unsigned got = central[other][size_class].remove_batch(out, n)) return got;
      }
      failed.fetch_add(1, std::memory_order_relaxed);
      return 0;
    }
    Span* span = allocate_pages(kSpanPages[size_class], 1, static_cast<std::uint8_t>(size_class));
    if (span == nullptr) {
      class_spans[size_class].count.fetch_sub(1, std::memory_order_relaxed);
      return 0;
    }
    return list.add_span_and_remove_batch(span, out, n);
  }

  // Pages from the heap; at the process ceiling, releases free memory (the calling thread's
  // cache first, which may empty spans) and tries once more.
  Span* allocate_pages(std::size_t pages, std::size_t align_pages, std::uint8_t size_class) noexcept {
    start_decay_once();
    bool hit_ceiling = false;
    Span* span = heap.allocate(pages, align_pages, size_class, &hit_ceiling);
    if (span == nullptr && hit_ceiling) {
      ceiling_hits.fetch_add(1, std::memory_order_relaxed);
      flush_current_thread_cache();
      heap.release(kReleaseEverything);
      span = heap.allocate(pages, align_pages, size_class, &hit_ceiling);
      // Still nothing: what other threads cache comes back at their next frees, for later calls.
      if (span == nullptr && hit_ceiling) request_drain_of_other_threads();
    }
    if (span == nullptr) failed.fetch_add(1, std::memory_order_relaxed);
    return span;
  }

  void start_decay_once() noexcept {
    if (!options.background_decay || decay_started.load(std::memory_order_acquire)) return;
    std::lock_guard lock(decay_mu);
    if (decay_started.load(std::memory_order_relaxed)) return;
    // Ticks at a quarter of the decay time: memory idle for `decay` goes back within 1.25 x.
    const auto period = std::max(std::chrono::milliseconds(5), options.decay / 4);
    const std::int64_t decay_ns = std::chrono::nanoseconds(options.decay).count();
    // Its stack comes from the allocator's own reservation (no new mapping mid-workload), except
    // under ASan, which wants to manage thread stacks itself.
    constexpr std::size_t kDecayStackBytes = 128 * 1024;
    void* stack = detail::kAsanMode ? nullptr : heap.allocate_metadata_pages(kDecayStackBytes);
    decay.start(
        period,
        [this, decay_ns] {
          if (heap.has_dirty_pages()) heap.release(PageHeap::now_ns() - decay_ns);
        },
        stack, kDecayStackBytes);
    decay_started.store(true, std::memory_order_release);
  }

  const AllocatorOptions options;
  std::uint64_t id = 0;
  PageHeap heap;
  // Central lists sharded by thread (round robin at a thread's first allocation): two threads
  // neither contend for one lock nor share spans, whose objects would otherwise interleave on
  // cache lines between them (measured: 2 threads on one instance 20-30% slower per op than on
  // two instances). A single thread uses one shard, so this costs it no memory.
  static constexpr unsigned kShards = 4;
  CentralFreeList central[kShards][kNumClasses];
  struct alignas(64) ClassSpanCount {
    std::atomic<std::size_t> count{0};
  };
  ClassSpanCount class_spans[kNumClasses];
  std::atomic<unsigned> next_shard{0};
  std::atomic<std::size_t> large_live_pages{0};
  std::atomic<std::uint64_t> ceiling_hits{0};
  std::atomic<std::uint64_t> failed{0};

  mutable std::mutex caches_mu;
  std::vector<ThreadCache*> caches;

  std::mutex decay_mu;
  std::atomic<bool> decay_started{false};
  detail::DecayThread decay;  // last: stopped first, before what it works on is destroyed
};

SizeClassAllocator::SizeClassAllocator(const AllocatorOptions& options)
    : impl_(std::make_unique<Impl>(options)) {
  impl_->id = detail::register_cache_owner(impl_.get());
  id_ = impl_->id;
  if (impl_->heap.ok()) {
    base_ = impl_->heap.base();
    reserved_bytes_ = impl_->heap.reserved_bytes();
    page_classes_ = impl_->heap.map().classes();
  }
}

SizeClassAllocator::~SizeClassAllocator() {
  impl_->decay.stop();
  // After this no exiting thread hands a cache back; caches still in other threads' tables are
  // deleted here and never matched again (ids are not reused).
  detail::unregister_cache_owner(id_);
  detail::forget_thread_cache(id_);
  {
    std::lock_guard lock(impl_->caches_mu);
    for (ThreadCache* cache : impl_->caches) delete cache;
    impl_->caches.clear();
  }
  // Poisoned shadow must not outlive the mapping: whatever is mapped here next is not ours.
  if (detail::kAsanMode && impl_->heap.ok()) {
    detail::unpoison(reinterpret_cast<void*>(base_), impl_->heap.counters().committed_bytes);
  }
}

void* SizeClassAllocator::allocate_slow(std::size_t size, std::size_t alignment) noexcept {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 || base_ == 0) return nullptr;
  alignment = std::max(alignment, detail::kSmallAlignment);
  if (const unsigned size_class = detail::size_class_of(size, alignment); size_class != 0) {
    ThreadCache* cache = impl_->cache_for_current_thread();
    void* batch[32];
    if (cache == nullptr) {  // no memory for a cache: one object straight from the class
      if (impl_->fetch_objects(size_class, 0, batch, 1) == 0) return nullptr;
      detail::unpoison(batch[0], kClassSize[size_class]);
      return batch[0];
    }
    impl_->drain_if_requested(cache);
    ThreadFreeList& list = cache->lists[size_class];
    if (list.head == nullptr) {
      const unsigned got = impl_->fetch_objects(size_class, cache->shard, batch, kBatchSize[size_class]);
      if (got == 0) return nullptr;
      for (unsigned i = got; i-- > 0;) {
        detail::store_link(batch[i], list.head, kClassSize[size_class]);
        list.head = batch[i];
      }
      list.length.store(list.length.load(std::memory_order_relaxed) + got, std::memory_order_relaxed);
    }
    void* p = list.head;
    list.head = detail::load_link(p);
    list.length.store(list.length.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    detail::unpoison(p, kClassSize[size_class]);
    return p;
  }
  // Large: whole pages, aligned as asked.
  if (size > std::numeric_limits<std::size_t>::max() - kPageSize) return nullptr;
  const std::size_t pages = std::max<std::size_t>(1, (size + kPageSize - 1) >> kPageShift);
  const std::size_t align_pages = std::max<std::size_t>(1, alignment >> kPageShift);
  if (pages > reserved_bytes_ >> kPageShift) {
    impl_->failed.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  Span* span = impl_->allocate_pages(pages, align_pages, 0);
  if (span == nullptr) return nullptr;
  impl_->large_live_pages.fetch_add(pages, std::memory_order_relaxed);
  void* p = reinterpret_cast<void*>(base_ + (span->first_page << kPageShift));
  detail::unpoison(p, pages << kPageShift);
  return p;
}

void SizeClassAllocator::deallocate_slow(void* p) noexcept {
  const std::uintptr_t offset = reinterpret_cast<std::uintptr_t>(p) - base_;
  if (p == nullptr || offset >= reserved_bytes_) return;  // not ours: nothing to do
  const std::size_t page = offset >> kPageShift;
  const unsigned size_class = page_classes_[page];
  if (size_class == 0) {
    Span* span = impl_->heap.map().span(page);
    impl_->large_live_pages.fetch_sub(span->pages, std::memory_order_relaxed);
    detail::poison(p, span->pages << kPageShift);
    impl_->heap.deallocate(span);
    return;
  }
  ThreadCache* cache = impl_->cache_for_current_thread();
  if (cache == nullptr) {
    impl_->return_objects(size_class, &p, 1);
    return;
  }
  if (cache->drain_requested.load(std::memory_order_relaxed)) {
    impl_->drain_if_requested(cache);
    impl_->return_objects(size_class, &p, 1);
    return;
  }
  ThreadFreeList& list = cache->lists[size_class];
  // A limit of 0 left behind by a drain request that raced with the last drain: restore it.
  if (list.max_length.load(std::memory_order_relaxed) == 0) Impl::restore_limits(cache);
  detail::store_link(p, list.head, kClassSize[size_class]);
  list.head = p;
  const std::uint32_t length = list.length.load(std::memory_order_relaxed) + 1;
  list.length.store(length, std::memory_order_relaxed);
  // Over the limit: hand a batch back, keeping the rest for the next allocations.
  if (length > list.max_length.load(std::memory_order_relaxed)) {
    impl_->flush_list(list, size_class, kBatchSize[size_class]);
  }
}

void* SizeClassAllocator::reallocate(void* p, std::size_t size) noexcept {
  if (p == nullptr) return allocate(size);
  if (size == 0) {
    deallocate(p);
    return nullptr;
  }
  const std::size_t old_size = usable_size(p);
  // Shrinking by less than half stays in place; less copying, bounded waste.
  if (size <= old_size && size >= old_size / 2) return p;
  void* q = allocate(size);
  if (q == nullptr) return nullptr;
  std::memcpy(q, p, std::min(size, old_size));
  deallocate(p);
  return q;
}

std::size_t SizeClassAllocator::usable_size(const void* p) const noexcept {
  const std::uintptr_t offset = reinterpret_cast<std::uintptr_t>(p) - base_;
  if (p == nullptr || offset >= reserved_bytes_) return 0;
  const std::size_t page = offset >> kPageShift;
  if (const unsigned size_class = page_classes_[page]; size_class != 0) return kClassSize[size_class];
  return impl_->heap.map().span(page)->pages << kPageShift;
}

std::size_t SizeClassAllocator::release_unused() noexcept {
  impl_->flush_current_thread_cache();
  return impl_->heap.release(kReleaseEverything);
}

bool SizeClassAllocator::metadata_locked() const noexcept { return impl_->heap.metadata_locked(); }

AllocatorStats SizeClassAllocator::stats() const {
  AllocatorStats s;
  std::uint64_t cached[kNumClasses] = {};
  {
    std::lock_guard lock(impl_->caches_mu);
    for (const ThreadCache* cache : impl_->caches) {
      for (unsigned c = 1; c < kNumClasses; ++c) {
        cached[c] += cache->lists[c].length.load(std::memory_order_relaxed);
      }
    }
    s.thread_caches = impl_->caches.size();
  }
  s.classes.reserve(kNumClasses - 1);
  for (unsigned c = 1; c < kNumClasses; ++c) {
    ClassStats cs;
    cs.object_size = kClassSize[c];
    // Objects out of the central list are either in a thread cache or live. Read while other
    // threads run, the two counts may be a batch apart; at rest they are exact.
    std::uint64_t out = 0;
    for (const auto& shard : impl_->central) out += shard[c].objects_out();
    cs.live_bytes = (out > cached[c] ? out - cached[c] : 0) * cs.object_size;
    cs.cached_bytes = cached[c] * cs.object_size;
    cs.held_bytes = impl_->class_spans[c].count.load(std::memory_order_relaxed) * kSpanPages[c] * kPageSize;
    s.live_bytes += cs.live_bytes;
    s.classes.push_back(cs);
  }
  s.large_live_bytes = impl_->large_live_pages.load(std::memory_order_relaxed) << kPageShift;
  s.live_bytes += s.large_live_bytes;
  const detail::PageHeapCounters heap = impl_->heap.counters();
  s.held_bytes = (heap.in_use_pages + heap.dirty_free_pages) << kPageShift;
  s.free_held_bytes = heap.dirty_free_pages << kPageShift;
  s.reserved_bytes = heap.reserved_bytes;
  s.committed_bytes = heap.committed_bytes;
  s.released_bytes_total = heap.released_bytes_total;
  s.mappings = heap.reservation_mappings;
  s.mmap_calls_total = heap.commit_calls_total + (impl_->heap.map().ok() ? 1 : 0);
  s.metadata_bytes = heap.metadata_committed_bytes;
  s.metadata_locked = heap.metadata_locked;
  s.release_system_calls_total = heap.release_system_calls_total;
  s.free_spans = heap.free_spans;
  s.ceiling_hits_total = impl_->ceiling_hits.load(std::memory_order_relaxed);
  s.failed_allocations_total = impl_->failed.load(std::memory_order_relaxed);
  return s;
}

}  // namespace memdiag::alloc
