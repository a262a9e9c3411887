// SPDX-License-Identifier: Apache-2.0
// Writing a short value into an existing file (a cgroup control file, a sysctl, cgroup.procs):
// one open(2) without O_CREAT/O_TRUNC, one write(2), close. Shared by the unit tests and the
// benchmarks, which all poke kernel files this way.
//
// Plain syscalls only, no stdio buffering: it also serves forked children before _exit(), where
// the parent's FILE buffers must not be flushed twice. true only if the whole text was written.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <string>

namespace memdiag::test_support {

inline bool write_text(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

}  // namespace memdiag::test_support
