// SPDX-License-Identifier: Apache-2.0
// The process source's part of a Snapshot: which processes are closest to
// vm.max_map_count and which hold the most memory, how all processes spread over the map-count
// ratio, and per-cgroup sums of their memory and of the private memory they were promised.
// Bounded by configuration: top-N by ratio, top-N by RSS, top-N by unbacked promise, the
// processes above the threshold (capped), the daemon itself, and at most max_cgroups cgroup sums.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memdiag {

// Why a process is in the selected set; a process can be there for several reasons.
enum ProcessSelectedFor : std::uint8_t {
  kTopMapAreas = 1,    // among the top-N by map count
  kTopResident = 2,    // among the top-N by resident memory
  kAboveThreshold = 4, // map count at or above threshold x max_map_count
  kSelf = 8,           // the daemon itself
  kTopUnbacked = 16,   // among the top-N by unbacked promise
};

struct SelectedProcess {
  int pid = 0;
  std::string comm;
  std::string cgroup;  // memory cgroup path, "" when unknown
  std::uint32_t map_count = 0;
  double map_areas_ratio = 0;  // map_count / max_map_count
  std::uint64_t rss_anon_bytes = 0;
  std::uint64_t rss_file_bytes = 0;
  std::uint64_t rss_shmem_bytes = 0;
  std::uint64_t swap_bytes = 0;
  std::uint64_t virtual_bytes = 0;
  std::uint64_t committed_private_bytes = 0;  // see ProcessMaps
  std::uint64_t unbacked_promise_bytes = 0;   // ProcessMaps::unbacked_promise_bytes()
  // Of committed_private_bytes, what is not a promise likely to come due (ProcessMaps), for
  // the processes whose maps were read.
  std::uint64_t thread_stack_bytes = 0;
  std::uint64_t private_file_bytes = 0;
  std::uint8_t selected_for = 0;  // ProcessSelectedFor bits
  // Its private size is more than the node could have charged (see ProcessSection's
  // uncharged_reservation_*): MAP_NORESERVE reservations, not promises. Not a promise holder,
  // and its figures are left out of every promise sum.
  bool uncharged_reservation = false;

  bool operator==(const SelectedProcess&) const = default;
};

// Sums over every process of one memory cgroup (not only the selected ones), so the process
// view adds up to the cgroup view.
struct CgroupProcessTotals {
  std::string cgroup;
  std::uint64_t processes = 0;
  std::uint64_t map_count = 0;
  std::uint64_t rss_anon_bytes = 0;
  std::uint64_t rss_file_bytes = 0;
  std::uint64_t rss_shmem_bytes = 0;
  std::uint64_t swap_bytes = 0;
  // Sums of the per-process figures: the promises this cgroup's processes hold.
  std::uint64_t committed_private_bytes = 0;
  std::uint64_t unbacked_promise_bytes = 0;

  bool operator==(const CgroupProcessTotals&) const = default;
};

// Upper bounds of the ratio histogram: most processes sit far below 1%, so the low end is
// logarithmic; the high end marks the default threshold (0.8) and the wall.
inline constexpr std::array<double, 8> kMapAreasRatioBounds = {0.001, 0.01, 0.1, 0.25, 0.5, 0.8, 0.9, 1.0};

struct ProcessSection {
  std::string_view mode;             // "bpf_iter" or "procfs"
  // When the scan was taken and how long it took: a slow scan is repeated less often than
  // every sample, which then carries the last one.
  std::chrono::system_clock::time_point scanned_at{};
  double scan_seconds = 0;
  double scan_cpu_seconds = 0;  // CPU time of the scanning thread (what pacing goes by)
  // A newer scan still running when this one was served, for this long (0: none). Scans run
  // off the sampler thread: one blocked on a process's mmap_lock holds up nothing else.
  double scan_in_flight_seconds = 0;
  std::uint64_t max_map_count = 0;   // vm.max_map_count when sampled
  double threshold_ratio = 0;        // the configured threshold
  std::uint64_t processes = 0;       // processes scanned (kernel threads excluded)
  double map_areas_ratio_max = 0;    // highest ratio on the node
  // Sums over every process scanned, whatever the selection and the cgroup cap;
  // the promise sums leave out the uncharged reservations below.
  std::uint64_t committed_private_bytes = 0;
  std::uint64_t unbacked_promise_bytes = 0;
  // RssAnon summed over every process: above meminfo AnonPages by the anonymous pages several
  // processes map (copy-on-write sharing after fork), which every sharer's commit counts.
  std::uint64_t rss_anon_bytes = 0;
  // meminfo AnonPages read right after the scan, so the two compare at one moment (the scan may
  // be older than the snapshot carrying it); absent when unread.
  std::optional<std::uint64_t> anon_pages_bytes;
  // Processes whose private size (VmData + VmStk) is more than the node's whole commit charge
  // (Committed_AS), or whose unbacked part is more than the node's whole unbacked promise, when
  // the scan ended: the kernel cannot have charged it, so most of it is MAP_NORESERVE
  // reservations (sanitizer shadow, JIT heaps, sparse arrays), which overcommit modes 0 and 1
  // never charge. A lower bound: a smaller reservation beside real promises is not told apart.
  std::uint64_t uncharged_reservation_processes = 0;
  std::uint64_t uncharged_reservation_bytes = 0;  // their committed_private_bytes
  // The commit that is not a promise likely to come due (thread stacks, private writable file
  // mappings), of the processes whose maps were read: the largest holders, so a process of a
  // thousand idle threads is not named for the 8 GiB of stacks it will never touch. Left out
  // of unbacked_promise_bytes above for those processes.
  std::uint64_t not_due_processes = 0;
  std::uint64_t not_due_thread_stack_bytes = 0;
  std::uint64_t not_due_private_file_bytes = 0;
  std::uint64_t above_threshold = 0; // all processes at or above the threshold
  std::uint64_t above_threshold_dropped = 0;  // of those, not in `selected` (cap)
  // Processes with ratio <= kMapAreasRatioBounds[i], cumulative; the last entry counts all.
  std::array<std::uint64_t, kMapAreasRatioBounds.size() + 1> ratio_cumulative{};
  // Ordered by pid.
  std::vector<SelectedProcess> selected;
  // At most max_cgroups of them: the top by resident memory and the top by unbacked promise
  // (see ProcessSelectionOptions::max_cgroups); most resident memory first.
  std::vector<CgroupProcessTotals> cgroups;
  std::uint64_t dropped_cgroups = 0;
  std::uint64_t unknown_cgroup_processes = 0;  // processes whose cgroup could not be named
  // Processes skipped: exited while being read (since start, normal), files unreadable or
  // malformed (last scan).
  std::uint64_t vanished_total = 0;
  std::uint64_t unreadable = 0;
  std::uint64_t malformed = 0;

  bool operator==(const ProcessSection&) const = default;
};

}  // namespace memdiag
