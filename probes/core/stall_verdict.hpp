// SPDX-License-Identifier: Apache-2.0
// Is the node stalling on memory right now, and why (the stall model,
// probes/analysis/stall_model.hpp): a level with hysteresis, the reasons with their numbers,
// the figures over the model's window and which signals there were. Plain data, computed once
// per sample and rendered from here.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "probes/core/verdict.hpp"

namespace memdiag {

// The model's reason codes (exported as memdiag_stall_reason{reason}).
namespace stall_reason {
// Tasks waited for memory: PSI some/full over the window (or, without PSI, eBPF stall time).
inline constexpr std::string_view kStallTime = "stall_time";
// Allocations reclaimed themselves: allocstall, pgscan_direct, eBPF direct-reclaim time.
inline constexpr std::string_view kDirectReclaim = "direct_reclaim";
// Cgroups reclaimed at their limits: eBPF memcg/soft-limit reclaim time.
inline constexpr std::string_view kMemcgLimit = "memcg_limit";
// Allocations compacted memory first: compact_stall, eBPF compaction time.
inline constexpr std::string_view kCompaction = "compaction";
// Evicted page cache was read back soon after: workingset refaults against the file cache.
inline constexpr std::string_view kThrashing = "thrashing";
// Reclaim scans many pages to free few (1 - pgsteal/pgscan, the kernel's vmpressure measure):
// what it can take is being taken back soon after, or is not reclaimable at all.
inline constexpr std::string_view kReclaimInefficient = "reclaim_inefficient";
// The kernel killed a task for memory in the window.
inline constexpr std::string_view kOomKill = "oom_kill";
// Swap is all but gone while the node is short of memory.
inline constexpr std::string_view kSwapExhausted = "swap_exhausted";
// The canary's page faults are much slower than its own calm baseline on this host.
inline constexpr std::string_view kSlowFaults = "slow_faults";
// Windows: pages read from disk to resolve hard faults (PDH \Memory\Pages Input/sec): trimmed
// working sets and paged-out memory coming back. Windows has no stall time; this is its level.
inline constexpr std::string_view kHardFaults = "hard_faults";
// Windows: the low-memory resource notification was signaled in the window (the memory
// manager's own "available memory is low": it is trimming working sets).
inline constexpr std::string_view kLowMemory = "low_memory";
inline constexpr std::string_view kAll[] = {kStallTime,  kDirectReclaim,      kMemcgLimit,    kCompaction,
                                            kThrashing,  kReclaimInefficient, kOomKill,       kSwapExhausted,
                                            kSlowFaults, kHardFaults,         kLowMemory};
}  // namespace stall_reason

// The signals a verdict can draw on; each is absent on some nodes (no PSI before 4.20, no eBPF
// without its privileges, ...). A verdict lists the ones it had.
namespace stall_signal {
inline constexpr std::string_view kPsi = "psi";
inline constexpr std::string_view kVmstat = "vmstat";
inline constexpr std::string_view kEbpf = "ebpf";
inline constexpr std::string_view kMeminfo = "meminfo";
inline constexpr std::string_view kCgroup = "cgroup";  // a cgroup scope's memory.stat/events/failcnt
inline constexpr std::string_view kCanary = "canary";  // the daemon's canary (the node only)
inline constexpr std::string_view kPaging = "paging";  // Windows: PDH's \Memory paging counters
inline constexpr std::string_view kLowMemory = "low_memory";  // Windows: the low-memory notification
}  // namespace stall_signal

// How long a stall measure has lasted (probes/analysis/stall_persistence.hpp): the share of
// time lost in every sub-interval of the last `sustain` (absent when it was not present in all
// of them: a burst), and over the longer window (recurring bursts read by their share).
struct StallPersistenceFigures {
  std::optional<double> sustained_ratio;
  std::optional<double> long_ratio;
};

struct StallFigures {
  double window_seconds = 0;  // what the rates below span (0: a single snapshot, no rates)
  std::optional<double> psi_some_ratio;  // share of the window some task waited for memory
  std::optional<double> psi_full_ratio;  // share of the window every non-idle task waited
  StallPersistenceFigures psi_some_persistence;
  StallPersistenceFigures psi_full_persistence;
  StallPersistenceFigures ebpf_persistence;  // of the eBPF stall time (direct + memcg + compaction)
  // Global reclaim, the node only: pages scanned by kswapd and by direct reclaim per second
  // over the thrashing window (vmstat pgscan_kswapd + pgscan_direct: the kernel counts them
  // only for reclaim that is not at a cgroup's limit).
  std::optional<double> global_scan_pages_per_second;
  std::optional<double> direct_reclaim_stall_ratio;  // eBPF: direct reclaim time per second
  std::optional<double> memcg_reclaim_stall_ratio;   // eBPF: memcg + soft-limit reclaim time per second
  std::optional<double> compaction_stall_ratio;      // eBPF: compaction time per second
  std::optional<double> allocstalls_per_second;      // vmstat allocstall_* summed
  std::optional<double> direct_scan_pages_per_second;  // vmstat pgscan_direct
  std::optional<double> compact_stalls_per_second;     // vmstat compact_stall
  // A cgroup scope's limit being hit: memory.events high + max (v2) or memory.failcnt (v1).
  std::optional<double> limit_events_per_second;
  // Refaulted file pages over the longer thrashing window, as a share of the file cache (lmkd).
  std::optional<double> refault_ratio;
  // Reclaim's failure to free what it scans over the thrashing window, 0..1: 1 - pgsteal/pgscan
  // (the node: vmstat kswapd + direct; a v2 cgroup: memory.stat), or for a v1 cgroup estimated
  // from the kernel's own vmpressure levels of the same measure (memory.pressure_level events:
  // critical 0.95, medium 0.60, low 0). 0 below the scan floor (global_scan_min_pages_per_second).
  std::optional<double> reclaim_inefficiency;
  std::optional<double> oom_kills;  // in the window (vmstat oom_kill)
  std::optional<double> swap_free_ratio;
  // The canary's newest cycle (within 30 s): its mean page-fault time over the calm baseline
  // (probes/analysis/fault_baseline.hpp). The node only.
  std::optional<double> fault_latency_ratio;
  // Windows (probes/core/windows_memory_section.hpp): hard-fault reads and the pages they
  // brought in, per second (PDH \Memory\Page Reads/sec and Pages Input/sec); the low-memory
  // notification: 1 when it was signaled now or turned signaled within the window, else 0.
  std::optional<double> hard_faults_per_second;
  std::optional<double> pages_input_per_second;
  std::optional<double> low_memory;
};

struct StallVerdict {
  VerdictLevel level = VerdictLevel::kNone;          // with hysteresis: what is exported
  VerdictLevel instant_level = VerdictLevel::kNone;  // this sample's evidence alone
  std::vector<VerdictReason> reasons;                // at level low or above, highest first
  std::vector<std::string_view> signals;             // the stall_signal names it had
  // Stall measures the scope lacks (stall_signal names: psi, ebpf). Without PSI the time tasks
  // wait on refaults and swap-ins is not measured: the level is then a lower bound.
  std::vector<std::string_view> missing_signals;
  bool lower_bound = false;
  StallFigures figures;
};

}  // namespace memdiag
