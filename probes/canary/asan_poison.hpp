// SPDX-License-Identifier: Apache-2.0
// ASan-compatible mode: when the allocator is compiled with AddressSanitizer, free objects are
// poisoned, so a caller touching memory after deallocate() is reported as a use-after-free.
// Free objects carry the allocator's own free-list link in their first word, so every access the
// allocator makes to a free object goes through load_link()/store_link(), which unpoison that
// word around the access. Without ASan all of this compiles to plain loads and stores.
#pragma once

#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#define MEMDIAG_ALLOC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MEMDIAG_ALLOC_ASAN 1
#endif
#endif

#if defined(MEMDIAG_ALLOC_ASAN)
#include <sanitizer/asan_interface.h>
#endif

namespace memdiag::alloc::detail {

#if defined(MEMDIAG_ALLOC_ASAN)
inline constexpr bool kAsanMode = true;
inline void poison(const void* p, std::size_t n) noexcept { __asan_poison_memory_region(p, n); }
inline void unpoison(const void* p, std::size_t n) noexcept { __asan_unpoison_memory_region(p, n); }
#else
inline constexpr bool kAsanMode = false;
inline void poison(const void*, std::size_t) noexcept {}
inline void unpoison(const void*, std::size_t) noexcept {}
#endif

// The next free object after `object` (of `object_size` bytes) in a free list.
inline void* load_link(void* object) noexcept {
  unpoison(object, sizeof(void*));
  void* next = *static_cast<void**>(object);
  poison(object, sizeof(void*));
  return next;
}

// Links free `object` to `next`; the whole object stays poisoned afterwards.
inline void store_link(void* object, void* next, [[maybe_unused]] std::size_t object_size) noexcept {
  unpoison(object, sizeof(void*));
  *static_cast<void**>(object) = next;
  poison(object, object_size);
}

}  // namespace memdiag::alloc::detail
