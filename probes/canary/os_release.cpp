// SPDX-License-Identifier: Apache-2.0
#include "probes/canary/os_release.hpp"

#include <cerrno>

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace memdiag::alloc::detail {

OsRelease::OsRelease() noexcept {
#if defined(SYS_pidfd_open) && defined(SYS_process_madvise)
  pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, getpid(), 0));
#endif
}

OsRelease::~OsRelease() {
  if (pidfd_ >= 0) close(pidfd_);
}

void OsRelease::add(void* p, std::size_t bytes) noexcept {
  ranges_[queued_++] = iovec{p, bytes};
  if (queued_ == kBatch) flush();
}

void OsRelease::flush() noexcept {
  std::size_t done = 0;
#if defined(SYS_process_madvise)
  while (pidfd_ >= 0 && done < queued_) {
    std::size_t expected = 0;
    for (std::size_t i = done; i < queued_; ++i) expected += ranges_[i].iov_len;
    system_calls_.fetch_add(1, std::memory_order_relaxed);
    long r = syscall(SYS_process_madvise, pidfd_, ranges_ + done, queued_ - done, MADV_DONTNEED, 0);
    if (r < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      // Not supported for this advice or kernel: madvise() from now on.
      close(pidfd_);
      pidfd_ = -1;
      break;
    }
    if (static_cast<std::size_t>(r) == expected) {
      done = queued_;
      break;
    }
    // A partial return: skip the ranges it covered (a range it stopped inside is redone whole,
    // which is harmless for MADV_DONTNEED).
    std::size_t covered = static_cast<std::size_t>(r);
    while (done < queued_ && covered >= ranges_[done].iov_len) covered -= ranges_[done++].iov_len;
  }
#endif
  for (; done < queued_; ++done) {
    system_calls_.fetch_add(1, std::memory_order_relaxed);
    madvise(ranges_[done].iov_base, ranges_[done].iov_len, MADV_DONTNEED);
  }
  queued_ = 0;
}

}  // namespace memdiag::alloc::detail
