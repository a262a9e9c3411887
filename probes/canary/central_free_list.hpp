// The central free list of one size class: the spans the class owns that still have free
// objects, shared by all threads under one lock, kept in buckets by occupancy. Objects are taken
// from the fullest spans first, so sparsely used spans stop getting new objects, drain under
// random frees, and go back to the page heap, where any class or a large object can reuse them.
// Without this, random churn leaves free slots spread over all spans and a class holds its
// high-water mark forever (measured: held 1.25 x live on a 16..1024 B churn). Thread caches take and return objects in
// batches, so a thread comes here once per batch, not once per object. A span whose objects are
// all free again leaves the class at once and goes back to the page heap (the caller does that,
// without this lock held), so free memory never stays stranded in a class.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "probes/canary/page_map.hpp"
#include "probes/canary/size_classes.hpp"
#include "probes/canary/span.hpp"

namespace memdiag::alloc::detail {

class CentralFreeList {
 public:
  void init(unsigned size_class, const PageMap* map, std::uintptr_t base) noexcept;

  // Moves up to n free objects into out; 0 when no span of the class has any left.
  unsigned remove_batch(void** out, unsigned n) noexcept;
  // Gives the class a fresh span from the page heap.
  void add_span(Span* span) noexcept;
  // Takes back n objects; spans left with no object in use are appended to `emptied` for the
  // caller to return to the page heap.
  void insert_batch(void* const* objects, unsigned n, SpanList& emptied) noexcept;

  // Held by the class: the bytes of the spans it owns. Reserved before a span is asked for, so a
  // per-class ceiling holds across threads.
  bool try_reserve_span(std::size_t ceiling_bytes) noexcept;
  void unreserve_span() noexcept;
  std::size_t held_bytes() const noexcept { return spans_.load(std::memory_order_relaxed) * span_bytes_; }
  std::size_t span_bytes() const noexcept { return span_bytes_; }
  // Objects handed out to thread caches or callers and not returned.
  std::uint64_t objects_out() const noexcept { return objects_out_.load(std::memory_order_relaxed); }

 private:
  static constexpr unsigned kOccupancyBuckets = 8;
  unsigned bucket_of(const Span* span) const noexcept {
    return span->allocated * kOccupancyBuckets / (objects_per_span_ + 1);
  }
  void link(Span* span) noexcept;
  void unlink(Span* span, unsigned bucket) noexcept;
  bool is_full(const Span* span) const noexcept {
    return span->free_objects == nullptr && span->carved == objects_per_span_;
  }

  std::mutex mu_;
  SpanList by_occupancy_[kOccupancyBuckets];  // spans with free objects; fuller = higher index
  unsigned nonempty_buckets_ = 0;             // bit per bucket
  const PageMap* map_ = nullptr;
  std::uintptr_t base_ = 0;
  std::uint32_t object_size_ = 0;
  std::uint32_t objects_per_span_ = 0;
  std::size_t span_bytes_ = 0;
  std::atomic<std::size_t> spans_{0};
  std::atomic<std::uint64_t> objects_out_{0};
};

}  // namespace memdiag::alloc::detail
