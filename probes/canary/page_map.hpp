// SPDX-License-Identifier: Apache-2.0
// Pointer -> span metadata, by (p - base) >> kPageShift, for the whole reservation.
//
// Two flat arrays in one MAP_NORESERVE mapping, backed lazily by the kernel as entries are
// written: the span of each page (every page of a small-object span; the first and last page of
// large and free spans, which is what deallocation and coalescing look up), and one byte per page
// with its size class, so the deallocation fast path reads a single byte. With lock_on_fault,
// entries once written stay resident (mlock2 MLOCK_ONFAULT: nothing is populated ahead, but
// RLIMIT_MEMLOCK counts the whole mapping, ~9 bytes per page of the reservation).
// On Windows (page_map_win32.cpp), which has no lazily charged mapping, the arrays are committed
// whole: ~9 bytes of commit charge per reserved page (36 MiB for a 16 GiB reservation), still
// no memory until entries are written.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memdiag::alloc::detail {

struct Span;

class PageMap {
 public:
  explicit PageMap(std::size_t pages, bool lock_on_fault = false) noexcept;
  ~PageMap();
  PageMap(const PageMap&) = delete;
  PageMap& operator=(const PageMap&) = delete;

  bool ok() const noexcept { return spans_ != nullptr; }
  bool locked() const noexcept { return locked_; }
  std::size_t pages() const noexcept { return pages_; }
  Span* span(std::size_t page) const noexcept { return spans_[page]; }
  void set_span(std::size_t page, Span* s) noexcept { spans_[page] = s; }
  const std::uint8_t* classes() const noexcept { return classes_; }
  void set_class(std::size_t page, std::uint8_t size_class) noexcept { classes_[page] = size_class; }

 private:
  std::size_t pages_ = 0;
  std::size_t bytes_ = 0;
  Span** spans_ = nullptr;
  std::uint8_t* classes_ = nullptr;
  bool locked_ = false;
};

}  // namespace memdiag::alloc::detail
