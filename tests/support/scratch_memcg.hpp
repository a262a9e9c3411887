// SPDX-License-Identifier: Apache-2.0
// Scratch cgroup v1 memory cgroups (/sys/fs/cgroup/memory/<name>) that tests and benchmarks
// create to put a workload under a memory limit of their own, and remove again.
//
// Creation and removal are shared so every user gets the same two details right: the caller's
// "created" flag is set right after mkdir (before the limit is written), so a cleanup running
// meanwhile (a signal handler) knows to remove it; and removal kills what is still in the cgroup
// and retries while exiting tasks leave it (rmdir fails with EBUSY until they have). Removal is
// async-signal-safe (open/read/close, kill, rmdir, nanosleep on a fixed buffer), so benchmarks
// can call it from their fatal-signal cleanup (tests/support/exit_cleanup.hpp).
#pragma once

#include <signal.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "tests/support/write_text.hpp"

namespace memdiag::test_support {

inline constexpr const char* kV1MemoryRoot = "/sys/fs/cgroup/memory";

// Async-signal-safe: sleeps `ms` milliseconds, resuming after EINTR.
inline void sleep_ms(long ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000L};
  while (::nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

// Async-signal-safe: SIGKILL to every task listed in a cgroup.procs file. Returns how many were
// listed.
inline int kill_cgroup_tasks(const char* procs_path) {
  const int fd = ::open(procs_path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[4096];
  int listed = 0;
  long pid = 0;
  bool in_number = false;
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i) {
      if (buf[i] >= '0' && buf[i] <= '9') {
        pid = pid * 10 + (buf[i] - '0');
        in_number = true;
      } else if (in_number) {
        ::kill(static_cast<pid_t>(pid), SIGKILL);
        ++listed;
        pid = 0;
        in_number = false;
      }
    }
  }
  if (in_number) {
    ::kill(static_cast<pid_t>(pid), SIGKILL);
    ++listed;
  }
  ::close(fd);
  return listed;
}

// Async-signal-safe. Removes a cgroup whose tasks may still be exiting: kill what is listed,
// rmdir, and on EBUSY pause `pause_ms` and try again, `attempts` times in all. true when it is
// gone (also when it never existed); false with errno from the last rmdir otherwise.
inline bool remove_memcg(const char* path, int attempts, long pause_ms) {
  char procs[512];
  std::snprintf(procs, sizeof procs, "%s/cgroup.procs", path);
  for (int attempt = 0; attempt < attempts; ++attempt) {
    kill_cgroup_tasks(procs);
    if (::rmdir(path) == 0 || errno == ENOENT) return true;
    if (errno != EBUSY) return false;
    sleep_ms(pause_ms);
  }
  return false;
}

// Creates the memory cgroup `path` with memory.limit_in_bytes = `limit_bytes`; with `inode`,
// also returns the directory's inode (the memcg id the kernel's cgroup v1 code reports).
// `created` (a bool, or a volatile sig_atomic_t a signal handler reads) is set to 1 as soon as
// the directory exists; it is left alone when mkdir fails, and then errno is mkdir's. On failure
// `why` says what failed; the caller removes a directory that was created (remove_memcg).
template <class Flag>
bool create_memcg(const char* path, std::uint64_t limit_bytes, Flag& created, std::string& why,
                  std::uint64_t* inode = nullptr) {
  if (::mkdir(path, 0755) != 0) {
    const int mkdir_errno = errno;
    why = std::string("mkdir ") + path + ": " + std::strerror(mkdir_errno);
    errno = mkdir_errno;
    return false;
  }
  created = 1;
  if (!write_text(std::string(path) + "/memory.limit_in_bytes", std::to_string(limit_bytes))) {
    why = std::string("setting memory.limit_in_bytes: ") + std::strerror(errno);
    return false;
  }
  if (inode != nullptr) {
    struct stat st{};
    if (::stat(path, &st) != 0) {
      why = std::string("stat ") + path + ": " + std::strerror(errno);
      return false;
    }
    *inode = st.st_ino;
  }
  return true;
}

}  // namespace memdiag::test_support
