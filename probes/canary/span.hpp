// SPDX-License-Identifier: Apache-2.0
// A span: a run of whole pages inside the reservation, either in use (a large object, or a
// small-object span owned by one size class) or free (dirty: touched and still held; clean:
// returned to the OS or never touched; releasing: being madvise()d right now).
#pragma once

#include <cstddef>
#include <cstdint>

namespace memdiag::alloc::detail {

enum class SpanState : std::uint8_t { kInUse, kFreeDirty, kFreeClean, kReleasing };

struct Span {
  std::size_t first_page = 0;  // page index from the reservation's base
  std::size_t pages = 0;
  SpanState state = SpanState::kInUse;
  std::uint8_t size_class = 0;  // 0: a large object or free
  std::uint8_t shard = 0;       // small-object spans: the central list shard that owns it

  // Small-object spans (under their class's central lock): objects handed out (to thread caches
  // or callers), objects carved so far (the rest of the span was never touched), freed objects.
  std::uint32_t allocated = 0;
  std::uint32_t carved = 0;
  void* free_objects = nullptr;

  // Intrusive links: the central list of spans with free objects, or the page heap's list of
  // dirty free spans in the order they were freed (what decay walks from its oldest end).
  Span* prev = nullptr;
  Span* next = nullptr;
  // Free spans of up to kSmallSpanPages pages: the page heap's list for their exact size.
  Span* size_prev = nullptr;
  Span* size_next = nullptr;
  std::int64_t freed_at_ns = 0;  // dirty free spans: when they were last freed
};

// An intrusive doubly linked list of spans through one pair of their link fields; O(1) push,
// remove, pop.
template <Span* Span::*Prev, Span* Span::*Next>
class IntrusiveSpanList {
 public:
  bool empty() const noexcept { return head_ == nullptr; }
  Span* front() const noexcept { return head_; }
  std::size_t size() const noexcept { return size_; }
  void push_back(Span* s) noexcept {
    s->*Next = nullptr;
    s->*Prev = tail_;
    if (tail_ != nullptr) tail_->*Next = s; else head_ = s;
    tail_ = s;
    ++size_;
  }
  void push_front(Span* s) noexcept {
    s->*Prev = nullptr;
    s->*Next = head_;
    if (head_ != nullptr) head_->*Prev = s; else tail_ = s;
    head_ = s;
    ++size_;
  }
  void remove(Span* s) noexcept {
    if (s->*Prev != nullptr) (s->*Prev)->*Next = s->*Next; else head_ = s->*Next;
    if (s->*Next != nullptr) (s->*Next)->*Prev = s->*Prev; else tail_ = s->*Prev;
    s->*Prev = s->*Next = nullptr;
    --size_;
  }

 private:
  Span* head_ = nullptr;
  Span* tail_ = nullptr;
  std::size_t size_ = 0;
};

// Central lists, the dirty-by-age list, lists handed between components.
using SpanList = IntrusiveSpanList<&Span::prev, &Span::next>;
// The page heap's free lists by exact size.
using SpanSizeList = IntrusiveSpanList<&Span::size_prev, &Span::size_next>;

}  // namespace memdiag::alloc::detail
