// The process source (issue 5): every process's map count against vm.max_map_count and its
// memory, reduced to the bounded set the exporter shows (probes/core/process_selection.hpp).
//
// Two scanners: the eBPF task iterator (about half a millisecond for 2,000 processes) and
// /proc (hundreds of times slower on a busy node, but needs nothing). In `auto` mode the
// iterator is tried and /proc serves while it cannot load; loading is retried at most once a
// minute.
//
// A scan costs what the kernel charges for the processes' files: ~1 ms with the iterator, but
// ~0.4 s with /proc on a node with 2,000 processes of 200 mappings. So the source holds itself
// to about 1% of a CPU: after a scan that took D, the next one waits at least 100 x D, and the
// samples in between carry the last scan's section (`scanned_at` says when it was taken).
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
#include "probes/core/source.hpp"
#include "probes/linux/cgroup_hierarchy.hpp"
#include "probes/linux/kernel_file.hpp"
#include "probes/linux/linux_sources.hpp"

namespace memdiag {

using BpfScannerOpener =
    std::function<Expected<std::unique_ptr<ProcessScanner>>(const std::optional<MemoryHierarchy>& hierarchy)>;

// This process's pid as <procfs> numbers it (readlink of <procfs>/self), which is what the
// scanners report when procfs is the host's /proc mounted elsewhere; getpid() when unreadable.
int own_pid_in(const std::string& procfs);

class ProcessSource final : public Source {
 public:
  static constexpr std::chrono::seconds kRetryLoadAfter{60};
  // vm.max_map_count's default since Linux 2.6 (USHRT_MAX - 5), used when the sysctl cannot be
  // read, so ratios stay meaningful on most nodes; the source says so in degraded().
  static constexpr std::uint64_t kDefaultMaxMapCount = 65530;
  // After a scan of duration D, none before D x this (1% of a CPU at most).
  static constexpr int kScanCostFactor = 100;

  // open_bpf: empty when built without eBPF. self_pid: the process always reported.
  ProcessSource(const KernelPaths& paths, const SourceOptions& options, BpfScannerOpener open_bpf, int self_pid);

  std::string_view name() const override { return "processes"; }
  Status probe() override;
  Status sample(Snapshot& out) override;
  std::string degraded() const override;

 private:
  // Tries the eBPF scanner unless it failed less than kRetryLoadAfter ago.
  Status try_bpf();
  Expected<std::uint64_t> read_max_map_count();
  std::unique_ptr<ProcessScanner> make_procfs_scanner() const;

  KernelPaths paths_;
  SourceOptions options_;
  BpfScannerOpener open_bpf_;
  int self_pid_;
  KernelFile mountinfo_;
  KernelFile max_map_count_file_;
  std::optional<MemoryHierarchy> hierarchy_;
  std::string hierarchy_problem_;
  std::unique_ptr<ProcessScanner> scanner_;
  std::optional<Error> bpf_failure_;
  std::chrono::steady_clock::time_point bpf_failed_at_;
  std::string max_map_count_problem_;
  std::vector<ProcessMaps> processes_;  // reused: a warm scan allocates nothing
  std::uint64_t vanished_total_ = 0;
  std::optional<ProcessSection> last_;  // served until next_scan_at_
  std::chrono::steady_clock::time_point next_scan_at_{};
};

}  // namespace memdiag
