// SPDX-License-Identifier: Apache-2.0
// One process as a process scanner reads it: how many mappings it has against
// vm.max_map_count, and what memory it holds. Both scanners fill the same record: the eBPF
// task iterator (probes/bpf/task_maps_iterator) and the /proc reader (probes/linux/
// proc_process_scanner) that stands in when BPF cannot load.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "probes/core/expected.hpp"

namespace memdiag {

struct ProcessMaps {
  // Process id (thread-group id), as the scanner's pid namespace numbers it (the BPF iterator:
  // the initial namespace; /proc: the namespace of the mounted procfs).
  int pid = 0;
  // The number of VMAs (mm->map_count), the figure vm.max_map_count limits. /proc/PID/maps
  // shows one more line on x86-64 with vsyscall emulation: [vsyscall] is not a VMA of the mm.
  std::uint32_t map_count = 0;
  // Resident memory by kind, swap and virtual size in bytes.
  std::uint64_t rss_anon_bytes = 0;
  std::uint64_t rss_file_bytes = 0;
  std::uint64_t rss_shmem_bytes = 0;
  std::uint64_t swap_bytes = 0;
  std::uint64_t virtual_bytes = 0;
  // The private memory the process has been promised: (mm->data_vm + mm->stack_vm)
  // pages, i.e. /proc/PID/status VmData + VmStk. data_vm counts the private writable mappings
  // that are not stacks (anonymous, brk heap, or of a file), stack_vm the stacks. The kernel
  // charges Committed_AS for private writable mappings (accountable_mapping()) and for stack
  // growth, so this is the process's share of Committed_AS, except that:
  // - MAP_NORESERVE mappings count here but are not charged in overcommit modes 0 and 1 (mode 2
  //   ignores the flag and charges them);
  // - private writable hugetlbfs mappings count here but are charged to the hugetlb pool, not
  //   to Committed_AS;
  // - shared writable anonymous or shmem mappings (MAP_SHARED|MAP_ANONYMOUS, memfd, SysV shm)
  //   are charged once per object, not per process, and are not here at all;
  // - Committed_AS also holds what the kernel charged outside any process's mappings (shmem
  //   files of tmpfs mounts that are not mapped, for one).
  std::uint64_t committed_private_bytes = 0;
  // Of committed_private_bytes, what is not a promise likely to come due: thread stacks and
  // private writable file mappings (probes/linux/process/promise_not_due.hpp). Known only for
  // the processes whose maps were read (the top holders), 0 for the rest.
  std::uint64_t thread_stack_bytes = 0;
  std::uint64_t private_file_bytes = 0;
  bool not_due_read = false;  // whether the two above were read
  // The command name, NUL-terminated (at most 15 characters, as the kernel keeps it).
  std::array<char, 16> comm{};
  // The process's memory cgroup as a key the scanner's cgroup_path() turns into a path: the
  // kernfs id of the memory cgroup for the BPF iterator, an index of paths seen for /proc.
  // 0: unknown.
  std::uint64_t cgroup_key = 0;

  std::uint64_t rss_bytes() const { return rss_anon_bytes + rss_file_bytes + rss_shmem_bytes; }
  // The promise not yet backed by memory: the private committed size (less what is not due)
  // minus what of it is
  // resident (anon) or swapped out, floored at 0. An estimate, and it errs low: RssAnon also
  // holds pages that are not in committed_private_bytes (copy-on-write copies of private
  // read-only file mappings, e.g. relocated library text; anon pages of a shared region do not
  // count there, they are shmem), and the RSS counters the task iterator reads may lag by a few
  // pages per CPU.
  // Less thread stacks and private file mappings where they were read: what of those is
  // resident is in RssAnon too, so the figure then errs low by the touched stack pages and the
  // written file pages.
  std::uint64_t unbacked_promise_bytes() const {
    const std::uint64_t not_due = thread_stack_bytes + private_file_bytes;
    const std::uint64_t promised = committed_private_bytes > not_due ? committed_private_bytes - not_due : 0;
    const std::uint64_t backed = rss_anon_bytes + swap_bytes;
    return promised > backed ? promised - backed : 0;
  }
  std::string_view comm_view() const {
    std::size_t n = 0;
    while (n < comm.size() && comm[n] != '\0') ++n;
    return {comm.data(), n};
  }
};

// What went wrong in a scan without failing it. Processes exiting mid-scan are normal.
struct ProcessScanProblems {
  std::size_t vanished = 0;    // listed, then gone before all their files were read
  std::size_t unreadable = 0;  // a file could not be read (permissions, hidepid=)
  std::size_t malformed = 0;   // a file did not parse
  std::string first;           // the first unreadable or malformed one, for the log
};

// A way to list every process with its mappings and memory. Not thread-safe.
class ProcessScanner {
 public:
  virtual ~ProcessScanner() = default;

  // "bpf_iter" or "procfs": the process_scan_info{mode} label.
  virtual std::string_view mode() const = 0;

  // One pass over all processes (kernel threads excluded). Replaces out's contents, reusing
  // its capacity: once warm, a scan allocates nothing. An error means the scan as a whole
  // failed (no /proc, the iterator broke); single processes failing are problems().
  virtual Status scan(std::vector<ProcessMaps>& out) = 0;

  // Problems of the last scan.
  virtual const ProcessScanProblems& problems() const = 0;

  // The memory cgroup of a record of the last scan, as a path relative to the memory
  // hierarchy's root ("/" for the root), like the cgroup source's `cgroup` label; nullptr when
  // the key is not known.
  virtual const std::string* cgroup_path(std::uint64_t cgroup_key) const = 0;
};

}  // namespace memdiag
