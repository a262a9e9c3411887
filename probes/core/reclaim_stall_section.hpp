// The eBPF reclaim-stall source's part of a Snapshot (issue 4): how long tasks waited in
// reclaim, compaction and throttling, as log2 histograms per kind, for the node and per
// memory cgroup, and the OOM victims per cgroup. Plain data; the exporter turns the slots into
// Prometheus buckets.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "probes/core/log2_distribution.hpp"

namespace memdiag {

// The layout of the in-kernel histograms (probes/bpf/log2_histogram.hpp, which the source
// checks it against).
inline constexpr std::size_t kStallSlots = kLog2Slots;
using StallSlots = Log2Slots;
using StallDistribution = Log2Distribution;

// By kind, in this order: the StallKind enum of probes/bpf.
inline constexpr std::array<std::string_view, 5> kStallKindNames = {"direct", "memcg", "softlimit", "compaction",
                                                                    "throttled"};

struct CgroupStall {
  std::string cgroup;       // path in the memory hierarchy
  std::uint8_t kind = 0;    // index into kStallKindNames
  StallDistribution stall;
};

struct CgroupOomVictims {
  std::string cgroup;
  std::uint64_t count = 0;
};

struct ReclaimStallSection {
  std::string_view attach_mode;  // "tp_btf" or "tracepoint"
  // Every stall of every task, including cgroups not exported and cgroups long gone.
  std::array<StallDistribution, kStallKindNames.size()> node{};
  std::uint64_t node_oom_victims = 0;
  // Most stalled cgroups first (total stall time), at most max_cgroups of them.
  std::vector<CgroupStall> cgroups;
  std::vector<CgroupOomVictims> oom_victims;
  std::size_t dropped_cgroups = 0;    // stalled cgroups beyond the cap
  std::uint64_t dropped_events = 0;   // not counted in kernel: maps full or victim unresolvable
  std::size_t unresolved_ids = 0;     // cgroup ids with no known path (created and removed between samples)
};

}  // namespace memdiag
