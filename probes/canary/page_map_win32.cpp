// SPDX-License-Identifier: Apache-2.0
// PageMap's memory on Windows: reserved and committed at once (see page_map.hpp for the cost);
// Windows backs committed pages with zeros on first touch, so only written entries use memory.
// lock_on_fault has no counterpart here: the map is never reported locked.
#include "probes/canary/page_map.hpp"

#include <windows.h>

namespace memdiag::alloc::detail {

PageMap::PageMap(std::size_t pages, bool) noexcept : pages_(pages) {
  bytes_ = pages * (sizeof(Span*) + 1);
  void* p = ::VirtualAlloc(nullptr, bytes_, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
  if (p == nullptr) return;
  spans_ = static_cast<Span**>(p);
  classes_ = reinterpret_cast<std::uint8_t*>(spans_ + pages);
}

PageMap::~PageMap() {
  if (spans_ != nullptr) ::VirtualFree(spans_, 0, MEM_RELEASE);
}

}  // namespace memdiag::alloc::detail
