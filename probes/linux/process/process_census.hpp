// SPDX-License-Identifier: Apache-2.0
// One process census: every process's map count against vm.max_map_count and its
// memory, reduced to the bounded set the exporter shows (probes/core/process_selection.hpp).
// The scanning half of the process source (process_source.hpp runs it on a thread of its own,
// paced, so a blocked /proc read never holds up the sampler); not thread safe by itself.
//
// Two scanners: the eBPF task iterator (about half a millisecond for 2,000 processes) and
// /proc (hundreds of times slower on a busy node, but needs nothing). In `auto` mode the
// iterator is tried and /proc serves while it cannot load; loading is retried at most once a
// minute, and an iterator that breaks at run time hands over to /proc the same way.
// The eBPF scanner is handed in as a function, so this library needs no libbpf and a
// daemon built without eBPF just has none.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "probes/core/process_record.hpp"
#include "probes/core/process_section.hpp"
#include "probes/core/source.hpp"
#include "probes/linux/cgroup/cgroup_hierarchy.hpp"
#include "probes/core/process_selection.hpp"
#include "probes/linux/kernel_file.hpp"
#include "probes/linux/node/meminfo_parser.hpp"
#include "probes/core/kernel_paths.hpp"
#include "probes/linux/process/process_options.hpp"
#include "probes/linux/process/promise_not_due.hpp"

namespace memdiag {

using BpfScannerOpener =
    std::function<Expected<std::unique_ptr<ProcessScanner>>(const std::optional<MemoryHierarchy>& hierarchy)>;

// This process's pid as <procfs> numbers it (readlink of <procfs>/self), which is what the
// scanners report when procfs is the host's /proc mounted elsewhere; getpid() when unreadable.
int own_pid_in(const std::string& procfs);

// The calling thread's CPU time, in seconds: what scans are paced by.
double thread_cpu_seconds();

class ProcessCensus {
 public:
  static constexpr std::chrono::seconds kRetryLoadAfter{60};
  // vm.max_map_count's default since Linux 2.6 (USHRT_MAX - 5), used when the sysctl cannot be
  // read, so ratios stay meaningful on most nodes; degraded() says so.
  static constexpr std::uint64_t kDefaultMaxMapCount = 65530;

  // open_bpf: empty when built without eBPF. self_pid: the process always reported.
  ProcessCensus(const KernelPaths& paths, const ProcessOptions& options, BpfScannerOpener open_bpf, int self_pid);

  // Finds the memory hierarchy and chooses the scanner; an error when none can serve.
  Status probe();
  // One full scan and selection (scan_seconds and scanned_at set). After a successful probe().
  Expected<ProcessSection> take();
  // Why the census is not all it could be (/proc instead of eBPF, default max_map_count,
  // processes skipped), or empty.
  std::string degraded() const;
  // The CPU time the last take() spent reading promise holders' maps (0 when it read none).
  // That reading has a budget of its own (kNotDueCostFactor), so the caller paces scans by
  // the rest: a holder's megabytes of maps must not slow the map-count census down.
  double not_due_cpu_seconds() const { return not_due_cpu_seconds_; }
  // Maps are read again only after this many times what the last reading cost (1 % of a CPU).
  static constexpr int kNotDueCostFactor = 100;

 private:
  // Tries the eBPF scanner unless it failed less than kRetryLoadAfter ago.
  Status try_bpf();
  Expected<std::uint64_t> read_max_map_count();
  // The node's commit charge and unbacked promise, to tell uncharged reservations apart
  // (ProcessSelectionOptions), and AnonPages (returned), at the end of a scan; absent when
  // /proc/meminfo cannot be read.
  std::optional<std::uint64_t> read_commit(ProcessSelectionOptions& selection);
  std::unique_ptr<ProcessScanner> make_procfs_scanner() const;
  // Reads the maps of the largest promise holders and takes their thread stacks and private
  // file mappings out of their promise (ProcessMaps::thread_stack_bytes).
  void read_not_due_promises(const ProcessSelectionOptions& selection);
  // Whether the scanner's pids are the ones <procfs> numbers processes by.
  bool pids_name_procfs_processes() const;

  KernelPaths paths_;
  ProcessOptions options_;
  BpfScannerOpener open_bpf_;
  int self_pid_;
  KernelFile mountinfo_;
  KernelFile max_map_count_file_;
  KernelFile meminfo_file_;
  std::vector<MeminfoEntry> meminfo_;  // reused
  std::optional<MemoryHierarchy> hierarchy_;
  std::string hierarchy_problem_;
  std::unique_ptr<ProcessScanner> scanner_;
  std::optional<Error> bpf_failure_;
  std::chrono::steady_clock::time_point bpf_failed_at_;
  std::string max_map_count_problem_;
  std::vector<ProcessMaps> processes_;  // reused: a warm scan allocates nothing
  // The last maps reading of each promise candidate, with the private size it was taken at.
  struct NotDueReading {
    std::uint64_t committed_private_bytes = 0;
    PromiseNotDue not_due;
  };
  std::unordered_map<int, NotDueReading> not_due_readings_;
  std::chrono::steady_clock::time_point next_not_due_read_at_{};
  double not_due_cpu_seconds_ = 0;
  std::uint64_t vanished_total_ = 0;
};

}  // namespace memdiag
