// SPDX-License-Identifier: Apache-2.0
// The eBPF reclaim-stall source's part of a Snapshot: how long tasks waited in
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
#include "probes/core/stall_kind.hpp"

namespace memdiag {

// The layout of the in-kernel histograms: both are probes/core/log2_layout.h.
using StallDistribution = Log2Distribution;

struct CgroupStall {
  std::string cgroup;       // path in the memory hierarchy
  StallKind kind = StallKind::kDirect;
  StallDistribution stall;

  bool operator==(const CgroupStall&) const = default;
};

struct CgroupOomVictims {
  std::string cgroup;
  std::uint64_t count = 0;

  bool operator==(const CgroupOomVictims&) const = default;
};

// One of the last tasks the OOM killer chose (oom:mark_victim), whichever cgroup it was in.
struct OomVictim {
  std::uint64_t sequence = 0;  // its number since the probe loaded: a victim newer than another has a higher one
  int pid = 0;                 // the process (thread group) id
  std::string comm;
  std::string cgroup;          // its memory cgroup, "" when the id could not be named

  bool operator==(const OomVictim&) const = default;
};

struct ReclaimStallSection {
  // "tp_btf", or "tracepoint" as soon as one kind (or the OOM victims) needed the classic
  // tracepoint fallback.
  std::string_view attach_mode;
  // How each kind is traced: "tp_btf", "tracepoint", or empty when neither could attach on
  // this kernel (the source's degraded() says why); its histograms then stay empty.
  std::array<std::string_view, kStallKindCount> kind_modes{};
  std::string_view oom_victims_mode;  // the same for the OOM victim program
  // Every stall of every task, including cgroups not exported and cgroups long gone.
  std::array<StallDistribution, kStallKindCount> node{};
  std::uint64_t node_oom_victims = 0;
  // Most stalled cgroups first (total stall time), at most max_cgroups of them.
  std::vector<CgroupStall> cgroups;
  std::vector<CgroupOomVictims> oom_victims;
  // The last victims (at most 16), oldest first: who was killed, not only where.
  std::vector<OomVictim> recent_oom_victims;
  std::size_t dropped_cgroups = 0;    // stalled cgroups beyond the cap
  std::uint64_t dropped_events = 0;   // not counted in kernel: maps full or victim unresolvable
  std::size_t unresolved_ids = 0;     // cgroup ids with no known path (created and removed between samples)

  bool operator==(const ReclaimStallSection&) const = default;
};

}  // namespace memdiag
