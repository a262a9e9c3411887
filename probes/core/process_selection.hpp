// SPDX-License-Identifier: Apache-2.0
// From every process of a scan to the bounded set the exporter shows: top-N by
// map-count ratio, top-N by resident memory, top-N by unbacked promise, every
// process at or above the threshold (up to a cap), the daemon itself; the ratio histogram,
// node-wide promise sums and per-cgroup sums over all processes. Pure: the cgroup names come
// from a callback, so it is tested without a kernel.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "probes/core/process_record.hpp"
#include "probes/core/process_section.hpp"

namespace memdiag {

struct ProcessSelectionOptions {
  std::size_t top_n = 10;                  // per ranking: map-count ratio, resident memory, unbacked promise
  double threshold_ratio = 0.8;            // of vm.max_map_count
  std::size_t max_above_threshold = 100;   // highest ratios first
  // Cgroup sums kept: taken in turn from the top by resident memory and the top by unbacked
  // promise, so neither kind of large cgroup is dropped for small ones of the other.
  std::size_t max_cgroups = 50;
  int self_pid = 0;                        // always selected; 0 = none
  // The node's commit charge (Committed_AS) and unbacked promise (Committed_AS - AnonPages -
  // Shmem - swap in use) when the scan began: a process promised more than either holds
  // reservations the node did not charge (ProcessSection::uncharged_reservation_*). Absent:
  // nobody is told apart.
  std::optional<std::uint64_t> commit_charge_bytes;
  std::optional<std::uint64_t> node_unbacked_bytes;
};

// nullptr when the key names no known cgroup.
using CgroupNamer = std::function<const std::string*(std::uint64_t cgroup_key)>;

// The processes whose maps are worth reading before select_processes ranks the holders:
// the `n` holding the most unbacked promise, reservations the node never charged left out.
std::vector<std::uint32_t> promise_candidates(const std::vector<ProcessMaps>& processes,
                                              const ProcessSelectionOptions& options, std::size_t n);

ProcessSection select_processes(const std::vector<ProcessMaps>& processes, std::uint64_t max_map_count,
                                const ProcessSelectionOptions& options, const CgroupNamer& name_cgroup);

}  // namespace memdiag
