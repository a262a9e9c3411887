// SPDX-License-Identifier: Apache-2.0
// A forked child holding a known unbacked promise, for the process scanners' live
// tests: it maps `bytes` of private writable anonymous memory (charged to Committed_AS, counted
// in VmData) and does not touch it, then touches the first part of it when told to, so the
// test sees bytes move from unbacked to resident. Named `comm`; dies with its parent
// (PR_SET_PDEATHSIG); killed and reaped by the destructor, however the test ends.
#pragma once

#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>

namespace memdiag::test_support {

// One store per page. Not instrumented: under AddressSanitizer each checked store reads its
// shadow byte, and the shadow of the touched range (1/8 of it) became resident too, so anon
// memory rose by 288 MiB for 256 MiB touched and the test measured ASan, not the process.
#if defined(__clang__) || defined(__GNUC__)
__attribute__((no_sanitize("address")))
#endif
inline void touch_pages(unsigned char* region, std::size_t bytes, std::size_t page) {
  volatile unsigned char* at = region;
  for (std::size_t offset = 0; offset < bytes; offset += page) at[offset] = 1;
}

class PromiseChild {
 public:
  // `comm`: at most 15 characters (the kernel cuts the rest).
  PromiseChild(std::size_t bytes, const char* comm) {
    int ready[2];
    int command[2];
    if (::pipe(ready) != 0) return;
    if (::pipe(command) != 0) {
      ::close(ready[0]);
      ::close(ready[1]);
      return;
    }
    pid_ = ::fork();
    if (pid_ == 0) {
      // In the child: only plain syscalls from here, then _exit (no test framework teardown).
      ::close(ready[0]);
      ::close(command[1]);
      ::prctl(PR_SET_NAME, comm);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      // No MAP_NORESERVE: the promise is charged, as a program's malloc'd arena would be.
      void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (base == MAP_FAILED) ::_exit(91);
      auto* region = static_cast<unsigned char*>(base);
      const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
      char byte = 'r';
      if (::write(ready[1], &byte, 1) != 1) ::_exit(93);
      // Each command is the number of bytes (from the start of the region) to touch.
      for (;;) {
        std::uint64_t touch = 0;
        const ssize_t n = ::read(command[0], &touch, sizeof touch);
        if (n == 0) ::_exit(0);
        if (n != static_cast<ssize_t>(sizeof touch)) continue;
        touch_pages(region, std::min<std::uint64_t>(touch, bytes), page);
        if (::write(ready[1], &byte, 1) != 1) ::_exit(94);
      }
    }
    ::close(ready[1]);
    ::close(command[0]);
    ready_fd_ = ready[0];
    command_fd_ = command[1];
    if (pid_ > 0) ready_ = wait_ack();
  }
  ~PromiseChild() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (ready_fd_ >= 0) ::close(ready_fd_);
    if (command_fd_ >= 0) ::close(command_fd_);
  }
  PromiseChild(const PromiseChild&) = delete;
  PromiseChild& operator=(const PromiseChild&) = delete;

  int pid() const { return pid_; }  // -1 if pipe or fork failed (errno says why)
  bool ready() const { return ready_; }

  // Touches the first `bytes` of the region (one write per page) and returns once done.
  bool touch(std::uint64_t bytes) {
    if (pid_ <= 0 || ::write(command_fd_, &bytes, sizeof bytes) != static_cast<ssize_t>(sizeof bytes)) return false;
    return wait_ack();
  }

 private:
  bool wait_ack() {
    char byte = 0;
    ssize_t n;
    do n = ::read(ready_fd_, &byte, 1);
    while (n < 0 && errno == EINTR);
    return n == 1;
  }

  int pid_ = -1;
  int ready_fd_ = -1;
  int command_fd_ = -1;
  bool ready_ = false;
};

}  // namespace memdiag::test_support
