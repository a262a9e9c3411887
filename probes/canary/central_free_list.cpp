// SPDX-License-Identifier: Apache-2.0
#include "probes/canary/central_free_list.hpp"

#include "probes/canary/asan_poison.hpp"

namespace memdiag::alloc::detail {

void CentralFreeList::init(unsigned size_class, unsigned shard, const PageMap* map,
                           std::uintptr_t base) noexcept {
  shard_ = static_cast<std::uint8_t>(shard);
  map_ = map;
  base_ = base;
  object_size_ = kClassSize[size_class];
  span_bytes_ = kSpanPages[size_class] * kPageSize;
  objects_per_span_ = static_cast<std::uint32_t>(span_bytes_ / object_size_);
}

void CentralFreeList::link(Span* span) noexcept {
  const unsigned b = bucket_of(span);
  by_occupancy_[b].push_back(span);
  nonempty_buckets_ |= 1u << b;
}

void CentralFreeList::unlink(Span* span, unsigned bucket) noexcept {
  by_occupancy_[bucket].remove(span);
  if (by_occupancy_[bucket].empty()) nonempty_buckets_ &= ~(1u << bucket);
}

unsigned CentralFreeList::remove_batch(void** out, unsigned n) noexcept {
  std::lock_guard lock(mu_);
  return remove_batch_locked(out, n);
}

unsigned CentralFreeList::add_span_and_remove_batch(Span* span, void** out, unsigned n) noexcept {
  span->shard = shard_;
  std::lock_guard lock(mu_);
  link(span);
  return remove_batch_locked(out, n);
}

unsigned CentralFreeList::remove_batch_locked(void** out, unsigned n) noexcept {
  unsigned got = 0;
  while (got < n && nonempty_buckets_ != 0) {
    const unsigned bucket = 31 - static_cast<unsigned>(__builtin_clz(nonempty_buckets_));
    Span* span = by_occupancy_[bucket].front();
    unlink(span, bucket);
    while (got < n) {
      void* object;
      if (span->free_objects != nullptr) {
        object = span->free_objects;
        span->free_objects = load_link(object);
      } else if (span->carved < objects_per_span_) {
        // Objects are carved as needed: the untouched rest of a span costs no RSS.
        object = reinterpret_cast<void*>(base_ + span->first_page * kPageSize +
                                         std::size_t{span->carved} * object_size_);
        ++span->carved;
      } else {
        break;
      }
      ++span->allocated;
      out[got++] = object;
    }
    if (!is_full(span)) link(span);
  }
  objects_out_.fetch_add(got, std::memory_order_relaxed);
  return got;
}

void CentralFreeList::insert_batch(void* const* objects, unsigned n, SpanList& emptied) noexcept {
  std::lock_guard lock(mu_);
  for (unsigned i = 0; i < n; ++i) {
    void* object = objects[i];
    Span* span = map_->span((reinterpret_cast<std::uintptr_t>(object) - base_) >> kPageShift);
    const bool was_full = is_full(span);
    const unsigned old_bucket = bucket_of(span);
    store_link(object, span->free_objects, object_size_);
    span->free_objects = object;
    --span->allocated;
    if (span->allocated == 0) {
      if (!was_full) unlink(span, old_bucket);
      emptied.push_back(span);
    } else if (was_full) {
      link(span);
    } else if (bucket_of(span) != old_bucket) {
      unlink(span, old_bucket);
      link(span);
    }
  }
  objects_out_.fetch_sub(n, std::memory_order_relaxed);
}

}  // namespace memdiag::alloc::detail
