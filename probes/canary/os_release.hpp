// SPDX-License-Identifier: Apache-2.0
// Returning page runs to the OS, batched: on Linux MADV_DONTNEED over many ranges in as few
// system calls as possible (os_release.cpp); on Windows MEM_DECOMMIT (os_release_win32.cpp). process_madvise() takes up to 1024 ranges per call and, since Linux 6.13, any
// advice when the target is the calling process; on these VMs one madvise() per 8 KiB hole costs
// 15-90 us against ~1.6 us per hole in process_madvise batches. Where the kernel
// refuses it (older kernels: ENOSYS, or EINVAL for MADV_DONTNEED) this falls back to one madvise()
// per range, and remembers.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#ifndef _WIN32
#include <sys/uio.h>
#endif

namespace memdiag::alloc::detail {

#ifdef _WIN32
// POSIX's iovec, which the queue holds on Linux for process_madvise.
struct iovec {
  void* iov_base;
  std::size_t iov_len;
};
#endif

class OsRelease {
 public:
  OsRelease() noexcept;
  ~OsRelease();
  OsRelease(const OsRelease&) = delete;
  OsRelease& operator=(const OsRelease&) = delete;

  // Queues [p, p + bytes) to be released; flushes when the batch is full.
  void add(void* p, std::size_t bytes) noexcept;
  // Releases everything queued.
  void flush() noexcept;

  std::uint64_t system_calls() const noexcept { return system_calls_.load(std::memory_order_relaxed); }

 private:
  static constexpr std::size_t kBatch = 1024;  // UIO_MAXIOV
  iovec ranges_[kBatch];
  std::size_t queued_ = 0;
  int pidfd_ = -1;  // Linux: -1 when process_madvise is unavailable (madvise then)
  std::atomic<std::uint64_t> system_calls_{0};  // read by stats() from any thread
};

}  // namespace memdiag::alloc::detail
