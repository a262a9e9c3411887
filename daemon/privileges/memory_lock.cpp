// SPDX-License-Identifier: Apache-2.0
#include "daemon/privileges/memory_lock.hpp"

#include <malloc.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>

#include "daemon/privileges/capabilities.hpp"

#ifndef MCL_ONFAULT
#define MCL_ONFAULT 4
#endif

namespace memdiag::privileges {

MemoryLock lock_daemon_memory() {
  MemoryLock result;
  rlimit limit{};
  const bool unlimited = ::getrlimit(RLIMIT_MEMLOCK, &limit) == 0 && limit.rlim_cur == RLIM_INFINITY;
  auto caps = current_capabilities();
  const bool has_ipc_lock = caps && (caps->effective & capability_bit(kCapIpcLock));
  if (!unlimited && !has_ipc_lock) {
    result.why_not =
        "needs CAP_IPC_LOCK or an unlimited memlock limit (LimitMEMLOCK=infinity); under a finite limit "
        "later allocations would fail";
    return result;
  }
  if (::mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) != 0) {
    result.why_not = std::string("mlockall: ") + std::strerror(errno);
    return result;
  }
  // Freed memory stays in glibc's heap (locked, resident) for the next exposition to reuse, and
  // buffers up to 64 MiB come from that heap instead of fresh mappings that would fault.
  ::mallopt(M_TRIM_THRESHOLD, 256 << 20);
  ::mallopt(M_MMAP_THRESHOLD, 64 << 20);
  result.locked = true;
  result.needs_ipc_lock = !unlimited;
  return result;
}

std::optional<std::uint64_t> parse_locked_bytes(std::string_view text) {
  constexpr std::string_view kKey = "\nLocked:";
  const std::size_t key = text.find(kKey);
  if (key == std::string_view::npos) return std::nullopt;
  std::size_t at = key + kKey.size();
  while (at < text.size() && text[at] == ' ') ++at;
  std::uint64_t kib = 0;
  const char* end = text.data() + text.size();
  const auto parsed = std::from_chars(text.data() + at, end, kib);
  if (parsed.ec != std::errc{} || parsed.ptr == text.data() + at) return std::nullopt;
  if (!std::string_view(parsed.ptr, end - parsed.ptr).starts_with(" kB")) return std::nullopt;
  if (kib > (UINT64_MAX >> 10)) return std::nullopt;
  return kib << 10;
}

std::optional<std::uint64_t> locked_resident_bytes(const std::string& procfs) {
  std::ifstream in(procfs + "/self/smaps_rollup");
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return parse_locked_bytes(text.str());
}

}  // namespace memdiag::privileges
