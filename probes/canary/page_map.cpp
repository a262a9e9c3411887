// SPDX-License-Identifier: Apache-2.0
// PageMap's memory on Linux: one MAP_NORESERVE mapping, backed and charged as entries are written.
#include "probes/canary/page_map.hpp"

#include <sys/mman.h>

namespace memdiag::alloc::detail {

PageMap::PageMap(std::size_t pages, bool lock_on_fault) noexcept : pages_(pages) {
  bytes_ = pages * (sizeof(Span*) + 1);
  void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return;
  locked_ = lock_on_fault && mlock2(p, bytes_, MLOCK_ONFAULT) == 0;
  spans_ = static_cast<Span**>(p);
  classes_ = reinterpret_cast<std::uint8_t*>(spans_ + pages);
}

PageMap::~PageMap() {
  if (spans_ != nullptr) munmap(spans_, bytes_);
}

}  // namespace memdiag::alloc::detail
