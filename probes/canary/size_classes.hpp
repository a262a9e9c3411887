// SPDX-License-Identifier: Apache-2.0
// Size classes of memdiag's allocator: how a request size maps to the object size that serves it
// and how many pages a span of that class spans.
//
// Steps are fine where most requests fall (16 B up to 256 B, 32 B up to 512 B, 64 B up to 1 KiB),
// so rounding costs ~20 B per object on a 16..1024 B mix (about what glibc's chunk header costs),
// then 4 classes per power of two up to 4 KiB. Above 4 KiB the classes are whole pages and a span
// holds exactly one object: a freed object then frees its span, which coalesces and can go back to
// the OS. Multi-object spans of 8 KiB objects could not: "free every second one" (the Zig pattern)
// would leave every span half used and nothing returnable.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace memdiag::alloc::detail {

inline constexpr std::size_t kPageShift = 12;
inline constexpr std::size_t kPageSize = std::size_t{1} << kPageShift;
inline constexpr std::size_t kMaxSmallSize = 32 * 1024;
// Every class size is a multiple of this, and spans start on a page, so every small object is
// aligned to it (and to any power of two dividing its class size).
inline constexpr std::size_t kSmallAlignment = 16;
// Class 0 means "not a small object" (a large span, or a free page) in the page-class map.
inline constexpr unsigned kNumClasses = 48;

constexpr std::array<std::uint32_t, kNumClasses> make_class_sizes() {
  std::array<std::uint32_t, kNumClasses> sizes{};
  unsigned i = 1;
  for (std::uint32_t s = 16; s <= 256; s += 16) sizes[i++] = s;
  for (std::uint32_t s = 288; s <= 512; s += 32) sizes[i++] = s;
  for (std::uint32_t s = 576; s <= 1024; s += 64) sizes[i++] = s;
  for (std::uint32_t s = 1280; s <= 2048; s += 256) sizes[i++] = s;
  for (std::uint32_t s = 2560; s <= 4096; s += 512) sizes[i++] = s;
  for (std::uint32_t s : {8192u, 12288u, 16384u, 20480u, 24576u, 28672u, 32768u}) sizes[i++] = s;
  return sizes;
}
inline constexpr std::array<std::uint32_t, kNumClasses> kClassSize = make_class_sizes();
static_assert(kClassSize[kNumClasses - 1] == kMaxSmallSize, "class table must fill kNumClasses");

// Pages per span: one object for page-sized classes; otherwise the fewest pages holding at least
// 4 objects with at most 1/8 of the span lost to the tail. Small spans keep the per-class
// high-water marks (what random churn leaves behind) small.
constexpr std::array<std::uint32_t, kNumClasses> make_span_pages() {
  std::array<std::uint32_t, kNumClasses> pages{};
  for (unsigned c = 1; c < kNumClasses; ++c) {
    const std::size_t size = kClassSize[c];
    if (size >= kPageSize) {
      pages[c] = static_cast<std::uint32_t>(size / kPageSize);
      continue;
    }
    std::size_t p = 1;
    while ((p * kPageSize) / size < 4 || (p * kPageSize % size) * 8 > p * kPageSize) ++p;
    pages[c] = static_cast<std::uint32_t>(p);
  }
  return pages;
}
inline constexpr std::array<std::uint32_t, kNumClasses> kSpanPages = make_span_pages();

// Objects moved between a thread cache and the central lists at once: ~16 KiB worth, 2..32.
constexpr std::array<std::uint32_t, kNumClasses> make_batch_sizes() {
  std::array<std::uint32_t, kNumClasses> batch{};
  for (unsigned c = 1; c < kNumClasses; ++c) {
    std::size_t b = 16384 / kClassSize[c];
    batch[c] = static_cast<std::uint32_t>(b < 2 ? 2 : (b > 32 ? 32 : b));
  }
  return batch;
}
inline constexpr std::array<std::uint32_t, kNumClasses> kBatchSize = make_batch_sizes();

// Lookup tables: sizes up to 1 KiB by 16 B steps, up to 32 KiB by 256 B steps.
template <std::size_t N>
constexpr std::array<std::uint8_t, N> make_class_index(std::size_t step) {
  std::array<std::uint8_t, N> index{};
  for (std::size_t k = 0; k < N; ++k) {
    unsigned c = 1;
    while (kClassSize[c] < k * step) ++c;
    index[k] = static_cast<std::uint8_t>(c);
  }
  return index;
}
inline constexpr auto kClassBy16 = make_class_index<1024 / 16 + 1>(16);
inline constexpr auto kClassBy256 = make_class_index<kMaxSmallSize / 256 + 1>(256);

// The class serving `size` (<= kMaxSmallSize); size 0 gets the smallest class.
inline unsigned size_class_of(std::size_t size) noexcept {
  return size <= 1024 ? kClassBy16[(size + 15) >> 4] : kClassBy256[(size + 255) >> 8];
}

// The class serving `size` at `alignment` (a power of two <= kPageSize), or 0 when none does: the
// first class at least that big whose size is a multiple of the alignment (objects sit at
// multiples of their size from a page boundary).
inline unsigned size_class_of(std::size_t size, std::size_t alignment) noexcept {
  if (size > kMaxSmallSize || alignment > kPageSize) return 0;
  if (size < alignment) size = alignment;
  for (unsigned c = size_class_of(size); c < kNumClasses; ++c) {
    if (kClassSize[c] % alignment == 0) return c;
  }
  return 0;
}

}  // namespace memdiag::alloc::detail
