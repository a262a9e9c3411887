// SPDX-License-Identifier: Apache-2.0
// A forked child holding a known number of separate anonymous mappings, for the process
// scanners' live tests (eBPF task iterator, /proc): both must report exactly the map count and
// the memory the kernel shows for it.
//
// `mappings` one-page read-write mappings with a PROT_NONE page before each one, so the kernel
// cannot merge neighbours (2 x `mappings` VMAs in all), every page touched so it counts as
// resident anonymous memory. The child names itself `comm`, dies with its parent
// (PR_SET_PDEATHSIG) and is killed and reaped by the destructor, however the test ends.
#pragma once

#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>

namespace memdiag::test_support {

class MappingsChild {
 public:
  // `comm`: at most 15 characters (the kernel cuts the rest).
  MappingsChild(std::size_t mappings, const char* comm) {
    int ready[2];
    if (::pipe(ready) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      // In the child: only plain syscalls from here, then _exit (no test framework teardown).
      ::close(ready[0]);
      ::prctl(PR_SET_NAME, comm);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
      void* base = ::mmap(nullptr, 2 * mappings * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (base == MAP_FAILED) ::_exit(91);
      auto* bytes = static_cast<unsigned char*>(base);
      for (std::size_t i = 0; i < mappings; ++i) {
        unsigned char* p = bytes + (2 * i + 1) * page;  // odd pages; even ones stay PROT_NONE
        if (::mprotect(p, page, PROT_READ | PROT_WRITE) != 0) ::_exit(92);
        p[0] = 1;  // fault it in: counted as anon RSS
      }
      const char byte = 'r';
      if (::write(ready[1], &byte, 1) != 1) ::_exit(93);
      for (;;) ::pause();
    }
    ::close(ready[1]);
    if (pid_ > 0) {
      char byte = 0;
      ssize_t n;
      do n = ::read(ready[0], &byte, 1);
      while (n < 0 && errno == EINTR);
      ready_ = n == 1;
    }
    ::close(ready[0]);
  }
  ~MappingsChild() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  MappingsChild(const MappingsChild&) = delete;
  MappingsChild& operator=(const MappingsChild&) = delete;

  int pid() const { return pid_; }  // -1 if pipe or fork failed (errno says why)
  bool ready() const { return ready_; }

 private:
  int pid_ = -1;
  bool ready_ = false;
};

}  // namespace memdiag::test_support
