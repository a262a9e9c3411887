// SPDX-License-Identifier: Apache-2.0
// Pure parsers for the per-process /proc files the /proc process scanner reads:
// /proc/PID/status (name, memory figures) and /proc/PID/cgroup (which memory cgroup). No I/O,
// no allocation on success: results point into the text they were given.
#pragma once

#include <cstdint>
#include <string_view>

#include "probes/core/expected.hpp"
#include "probes/linux/cgroup/cgroup_hierarchy.hpp"

namespace memdiag {

struct ProcessStatus {
  std::string_view name;  // "Name:" as the kernel escapes it (backslash and newline escaped)
  int tgid = 0;
  // False for kernel threads and zombies: no VmSize/VmRSS lines, nothing to count.
  bool has_mm = false;
  std::uint64_t virtual_bytes = 0;  // VmSize
  std::uint64_t rss_anon_bytes = 0;
  std::uint64_t rss_file_bytes = 0;
  std::uint64_t rss_shmem_bytes = 0;
  std::uint64_t swap_bytes = 0;     // VmSwap
  std::uint64_t data_bytes = 0;     // VmData: private writable non-stack mappings (mm->data_vm)
  std::uint64_t stack_bytes = 0;    // VmStk: stacks (mm->stack_vm)
};

// Errors for text that is truncated before Name/Tgid, has a garbage number in a field it
// reads, or a line over the field limit.
Expected<ProcessStatus> parse_process_status(std::string_view text);

// The memory cgroup path in /proc/PID/cgroup: on v1 the line whose controller list has
// "memory" ("4:memory:/system.slice/x.service"), on v2 the "0::/path" line. The path is as
// the file shows it, relative to the reader's cgroup namespace root ("/" for the root).
Expected<std::string_view> memory_cgroup_of(std::string_view proc_pid_cgroup, CgroupVersion version);

// The command name the kernel keeps (at most 15 bytes) from status's escaped Name: undoes
// "\\n" and "\\\\", writes at most out_size-1 bytes and a NUL.
void unescape_process_name(std::string_view escaped, char* out, std::size_t out_size);

}  // namespace memdiag
