// SPDX-License-Identifier: Apache-2.0
// Processes as members of a pressured scope. A cgroup's children say which job presses; its processes say which program in
// it, and they are what a person stops. The processes are the process source's selection (top-N
// by resident memory, by unbacked promise, by map count: probes/core/process_selection.hpp), so
// a scope names its top processes from among those; each is judged against the whole scope with
// the members' rules (pressure_roles.hpp): its share of the scope's resident footprint (anon +
// shmem), of the footprint's growth (an EMA between process scans) and of the scope's unbacked
// promises. Processes have no stall figure of their own, so they are only ever contributors.
//
// On Windows the processes come from ProcessMemorySection (windows/process_memory): a process's
// footprint is its private bytes (its commit charge, what Windows enforces the limit on), so the
// contributors are those holding and growing private bytes.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "probes/analysis/growth_ema.hpp"
#include "probes/analysis/pressure_roles.hpp"
#include "probes/core/pressure_scope.hpp"
#include "probes/core/process_memory_section.hpp"
#include "probes/core/process_section.hpp"
#include "probes/core/snapshot.hpp"

namespace memdiag::analysis {

// One selected process as the ranking sees it, on either platform. Its strings point into the
// section it was read from.
struct MemberProcess {
  int pid = 0;
  std::string_view comm;
  std::string_view cgroup;  // "" where there are no cgroups (Windows)
  std::uint64_t footprint_bytes = 0;  // Linux resident anon + shmem; Windows private bytes
  std::uint64_t relief_bytes = 0;     // the RAM stopping it gives back: resident anon; private bytes
  std::uint64_t swap_bytes = 0;       // Linux: what it has in swap (freed too, but not RAM)
  std::uint64_t unbacked_promise_bytes = 0;
};

struct ProcessScan {
  std::chrono::system_clock::time_point scanned_at;
  std::vector<MemberProcess> processes;
};

// Linux's process scan.
ProcessScan scan_of(const ProcessSection& processes);
// Windows's, taken with the snapshot at `taken_at`. Private bytes are the footprint; where they
// are 0 (wine leaves PrivateUsage at 0), the working set.
ProcessScan scan_of(const ProcessMemorySection& processes, std::chrono::system_clock::time_point taken_at);
// The snapshot's processes: Linux's section where there is one, else Windows's; nullopt with neither.
std::optional<ProcessScan> process_scan(const Snapshot& snapshot);

// The footprint growth of each selected process, from one process scan to the next (a sample
// without a new scan changes nothing). Bounded by the selection: processes that leave it are
// forgotten.
class ProcessGrowthTracker {
 public:
  void update(const ProcessScan* scan, std::chrono::milliseconds half_life);
  void update(const ProcessSection* processes, std::chrono::milliseconds half_life);
  // Absent until the process was in two scans (a reused pid starts again).
  std::optional<double> growth(const MemberProcess& process) const;
  std::optional<double> growth(const SelectedProcess& process) const;

 private:
  struct Entry {
    std::string comm;
    GrowthEma ema;
    int scans = 0;
    std::uint64_t scan = 0;  // the scan it was last seen in
  };
  std::unordered_map<int, Entry> by_pid_;
  std::chrono::system_clock::time_point last_scan_{};
  std::uint64_t scans_ = 0;
};

// What the whole scope holds, grows and was promised (the denominators of a process's shares),
// and what it is short of.
struct ScopeTotals {
  std::string_view cgroup;  // its processes are in it or below; "" for the node: every process
  ScopeWhole whole;
};

std::uint64_t process_footprint_bytes(const SelectedProcess& p);

// The scope's contributing processes, highest contribution first: the smallest set whose RAM
// relief covers the scope's shortfall (pressure_roles.hpp), at most roles.max_members; empty
// when `scope_level` is none or the scope is not short of memory.
std::vector<ScopeProcess> rank_processes(const ProcessScan& scan, const ScopeTotals& scope, VerdictLevel scope_level,
                                         const ProcessGrowthTracker& growth, const RoleSettings& roles);
std::vector<ScopeProcess> rank_processes(const ProcessSection& processes, const ScopeTotals& scope,
                                         VerdictLevel scope_level, const ProcessGrowthTracker& growth,
                                         const RoleSettings& roles);

}  // namespace memdiag::analysis
