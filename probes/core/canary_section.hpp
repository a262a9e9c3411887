// SPDX-License-Identifier: Apache-2.0
// The canary's part of a Snapshot: how long this node takes to give a thread a page
// right now, read by the daemon's own canary (and optional canaries inside chosen cgroups),
// plus the stats of the allocator the canary runs on. Counts are cumulative since start.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "probes/core/log2_distribution.hpp"

namespace memdiag {

struct CanaryReading {
  // First touch of each page of a freshly allocated working set (one page fault each).
  Log2Distribution page_fault;
  // A whole cycle: allocate the working set across size classes and touch every page.
  Log2Distribution cycle;
  std::uint64_t cycles = 0;
  std::uint64_t failures = 0;  // cycles whose allocations failed (a ceiling, the OS)
  std::uint64_t skipped = 0;   // cycles skipped because node memory PSI was high
  bool backing_off = false;    // the last due cycle was skipped
  double last_psi_full_avg10 = 0;  // percent, as /proc/pressure/memory says

  // Adds another reading's distributions and counts (a restarted canary child's predecessors);
  // backing_off and the PSI reading stay this one's, they describe now.
  void add_counts(const CanaryReading& other) {
    page_fault.add(other.page_fault);
    cycle.add(other.cycle);
    cycles += other.cycles;
    failures += other.failures;
    skipped += other.skipped;
  }

  bool operator==(const CanaryReading&) const = default;
};

// What the canary's allocator instance holds (memdiag_allocator_*). The daemon's canary runs
// in a child process; these are the stats that child sends back.
struct CanaryAllocatorStats {
  std::uint64_t live_bytes = 0;
  std::uint64_t held_bytes = 0;
  std::uint64_t reserved_bytes = 0;
  std::uint64_t released_bytes_total = 0;
  std::uint64_t mappings = 0;
  std::uint64_t ceiling_hits_total = 0;
  std::uint64_t failed_allocations_total = 0;
  // The process ceiling it was given (held bytes never exceed it; 0: none): what "near its
  // ceiling" is measured against.
  std::uint64_t ceiling_bytes = 0;

  // Adds another instance's counters (a restarted child's predecessors'); the gauges stay this
  // one's: they describe what the running child holds now.
  void add_counters(const CanaryAllocatorStats& other) {
    released_bytes_total += other.released_bytes_total;
    ceiling_hits_total += other.ceiling_hits_total;
    failed_allocations_total += other.failed_allocations_total;
  }

  bool operator==(const CanaryAllocatorStats&) const = default;
};

struct CgroupCanaryReading {
  std::string cgroup;  // where the child canary runs
  bool running = false;
  std::string error;   // why it is not (could not start, exited)
  CanaryReading reading;

  bool operator==(const CgroupCanaryReading&) const = default;
};

struct CanarySection {
  CanaryReading node;       // the daemon's own canary (a child process), in the daemon's cgroup
  std::string node_cgroup;  // that cgroup's path ("" when unknown)
  bool node_running = false;  // its child process is alive
  CanaryAllocatorStats allocator;
  std::vector<CgroupCanaryReading> cgroups;

  bool operator==(const CanarySection&) const = default;
};

}  // namespace memdiag
