// SPDX-License-Identifier: Apache-2.0
// Per-process map counts and RSS split, eBPF half: an iter/task program
// (task_maps.bpf.c) walks the kernel's task list once per scan and emits one binary record per
// process; no /proc/PID/maps reads. Loading + attaching costs tens of milliseconds once, in a
// short-lived child process (bpf_loader_child.hpp: libbpf's parse of the kernel's BTF is paid
// there), which sends back the iterator's link; a scan of ~2000 processes about 0.6-0.8 ms here
// (6.18, 2 CPUs).
//
// Errors are values naming the cause ("no BTF at ...", "permission denied ...", "kernel lacks
// BPF task iterators ..."); libbpf's own output never reaches stderr.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "probes/bpf/bpf_loader_child.hpp"
#include "probes/core/expected.hpp"
#include "probes/core/process_record.hpp"
#include "probes/linux/unique_fd.hpp"

namespace memdiag {

// open()'s work in the loader child (bpf_loader_child.hpp), by name; args: the BTF path or none.
inline constexpr std::string_view kTaskMapsLoader = "task_maps";
BpfHandoff load_task_maps_for_parent(const std::vector<std::string>& args);

class TaskMapsIterator {
 public:
  // Loads task_maps.bpf.c and attaches the iterator link (once), in a child process. btf_path:
  // BTF for CO-RE relocations; empty = /sys/kernel/btf/vmlinux. Needs CAP_BPF + CAP_PERFMON.
  static Expected<std::unique_ptr<TaskMapsIterator>> open(const std::string& btf_path = "");

  ~TaskMapsIterator() = default;  // closing the link frees the program
  TaskMapsIterator(const TaskMapsIterator&) = delete;
  TaskMapsIterator& operator=(const TaskMapsIterator&) = delete;

  // One pass over all processes visible in the caller's pid namespace (kernel threads and
  // non-leader threads excluded). Replaces out's contents, reusing its capacity: once warm, a
  // scan allocates nothing. Order is the kernel's pid order. On error `out` holds what was read
  // before it. Not thread-safe with itself.
  Status scan(std::vector<ProcessMaps>& out);

 private:
  TaskMapsIterator(UniqueFd link, std::uint64_t page_size);

  UniqueFd link_;  // the iterator's link: each scan creates an iterator from it
  std::uint64_t page_size_;
  std::vector<unsigned char> buffer_;  // read buffer, kept between scans
};

}  // namespace memdiag
