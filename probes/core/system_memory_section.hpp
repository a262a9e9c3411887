// SPDX-License-Identifier: Apache-2.0
// The node's memory in terms every platform has: physical memory, swap (the page file on
// Windows) and the commit account, the promises made against what could back them. Linux fills
// it from /proc/meminfo (commit charge = Committed_AS, limit = CommitLimit); Windows from
// GetPerformanceInfo / GlobalMemoryStatusEx. Everything derived from it (probes/analysis) is
// portable. The kernel-specific view stays in its own sections (every meminfo field).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace memdiag {

struct SystemMemory {
  std::uint64_t physical_total_bytes = 0;
  std::uint64_t physical_available_bytes = 0;  // could be handed out without swapping (MemAvailable)
  std::uint64_t swap_total_bytes = 0;
  std::uint64_t swap_free_bytes = 0;
  // Memory promised to processes (Linux Committed_AS, Windows commit charge), and the limit the
  // system enforces when it enforces one (Linux CommitLimit: enforced only under
  // vm.overcommit_memory=2; Windows: always).
  std::optional<std::uint64_t> commit_charge_bytes;
  std::optional<std::uint64_t> commit_limit_bytes;
  // The part of the commit charge backed right now, by RAM or swap (Linux: AnonPages + Shmem +
  // swap in use). The rest is promised and not yet paid for: it comes due as page faults.
  // Absent where the system does not say (Windows enforces its limit, so it does not matter).
  std::optional<std::uint64_t> commit_backed_bytes;

  bool operator==(const SystemMemory&) const = default;
};

// How the system answers a request for memory it may not be able to back (Linux
// vm.overcommit_memory). Windows always refuses a commit beyond its limit: kNever.
enum class OvercommitMode : std::uint8_t {
  kHeuristic = 0,  // Linux 0: refuse only obviously impossible requests
  kAlways = 1,     // Linux 1: never refuse; the bill comes due as page faults and OOM kills
  kNever = 2,      // Linux 2 and Windows: refuse beyond the commit limit
};
inline constexpr std::string_view to_string(OvercommitMode mode) {
  switch (mode) {
    case OvercommitMode::kHeuristic: return "heuristic";
    case OvercommitMode::kAlways: return "always";
    case OvercommitMode::kNever: return "never";
  }
  return "unknown";
}

// The overcommit policy, where the system has one (Linux vm.overcommit_*).
struct OvercommitPolicy {
  OvercommitMode mode = OvercommitMode::kHeuristic;
  std::optional<double> ratio_percent;  // vm.overcommit_ratio: RAM share in the limit (mode 2)
  std::optional<std::uint64_t> kbytes;  // vm.overcommit_kbytes: replaces the ratio when non-zero

  bool operator==(const OvercommitPolicy&) const = default;
};

}  // namespace memdiag
