// Per-process map counts and RSS split (issue #5), eBPF half: an iter/task program
// (task_maps.bpf.c) walks the kernel's task list once per scan and emits one binary record per
// process; no /proc/PID/maps reads. Loading + attaching costs tens of milliseconds once; a scan
// of ~2000 processes about 0.6-0.8 ms here (6.18, 2 CPUs).
//
// Errors are values naming the cause ("no BTF at ...", "permission denied ...", "kernel lacks
// BPF task iterators ..."); libbpf's own output never reaches stderr.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "probes/core/expected.hpp"

struct task_maps;  // the bpftool skeleton, kept out of this header
struct bpf_link;

namespace memdiag {

struct ProcessMaps {
  // Process id (thread-group id) as the initial pid namespace numbers it (task->tgid).
  int pid = 0;
  // mm->map_count: the number of VMAs, the figure vm.max_map_count limits. /proc/PID/maps
  // shows one more line on x86-64 with vsyscall emulation: [vsyscall] is not a VMA of the mm.
  std::uint32_t map_count = 0;
  // mm->rss_stat counters times the page size. Approximate (the kernel's global percpu_counter
  // value without the per-CPU deltas folded in; negative values are reported as 0).
  std::uint64_t rss_anon_bytes = 0;
  std::uint64_t rss_file_bytes = 0;
  std::uint64_t rss_shmem_bytes = 0;
  std::uint64_t swap_bytes = 0;     // MM_SWAPENTS: swapped-out pages of this mm
  std::uint64_t virtual_bytes = 0;  // mm->total_vm
  // The leader thread's comm, NUL-terminated (at most 15 characters).
  std::array<char, 16> comm{};
  // Memory cgroup: kernfs id in the memory controller's hierarchy, i.e. stat(dir).st_ino of the
  // v1 memory cgroup directory (or of the v2 directory). 1 = root.
  std::uint64_t memcg_id = 0;

  std::string_view comm_view() const;
};

class TaskMapsIterator {
 public:
  // Loads task_maps.bpf.c and attaches the iterator link (once). btf_path: BTF for CO-RE
  // relocations; empty = /sys/kernel/btf/vmlinux. Needs CAP_BPF + CAP_PERFMON (root).
  static Expected<std::unique_ptr<TaskMapsIterator>> open(const std::string& btf_path = "");

  ~TaskMapsIterator();  // detaches and frees the program
  TaskMapsIterator(const TaskMapsIterator&) = delete;
  TaskMapsIterator& operator=(const TaskMapsIterator&) = delete;

  // One pass over all processes visible in the caller's pid namespace (kernel threads and
  // non-leader threads excluded). Replaces out's contents, reusing its capacity: once warm, a
  // scan allocates nothing. Order is the kernel's pid order. On error `out` holds what was read
  // before it. Not thread-safe with itself.
  Status scan(std::vector<ProcessMaps>& out);

 private:
  TaskMapsIterator(struct task_maps* skeleton, struct bpf_link* link, std::uint64_t page_size);

  struct task_maps* skel_;
  struct bpf_link* link_;
  std::uint64_t page_size_;
  std::vector<unsigned char> buffer_;  // read buffer, kept between scans
};

}  // namespace memdiag
