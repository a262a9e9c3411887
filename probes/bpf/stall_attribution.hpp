// SPDX-License-Identifier: Apache-2.0
// The user-space half of the reclaim-stall source that needs no BPF: from the probe's raw
// reading (histograms and OOM victims keyed by memory cgroup id) to the section, i.e. naming
// the ids, keeping the `max_cgroups` most stalled ones, exporting a removed cgroup for
// `retain_removed`, and then folding its counts into the node totals once the kernel maps
// forgot it (so the maps stay small and the node totals never go backwards). Apart from the
// probe so that it can be tested with readings made up in the test, real directories for
// names and a clock the test sets.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>

#include "probes/bpf/reclaim_stall_options.hpp"
#include "probes/bpf/reclaim_stall_probe.hpp"
#include "probes/core/reclaim_stall_section.hpp"
#include "probes/linux/cgroup/cgroup_id_map.hpp"

namespace memdiag {

class StallAttribution {
 public:
  // Deletes one cgroup id's entries from the kernel maps; says which are gone
  // (ReclaimStallProbe::forget).
  using Forget = std::function<ReclaimStallProbe::Forgotten(std::uint64_t memcg_id)>;

  explicit StallAttribution(const ReclaimStallOptions& options) : options_(options) {}

  // The section for `reading` (cumulative since the probe loaded), with `ids` brought up to
  // date by the caller at `now`. Ids never named, or removed longer than retain_removed ago,
  // are forgotten through `forget` after this sample, their counts kept in the node totals.
  // Fills node, node_oom_victims, cgroups, oom_victims, dropped_cgroups and unresolved_ids.
  ReclaimStallSection attribute(const ReclaimStallReading& reading, CgroupIdMap& ids,
                                std::chrono::steady_clock::time_point now, const Forget& forget);

 private:
  // Forgets a cgroup id in the kernel maps, keeping what is gone from them in the node totals.
  void retire(std::uint64_t id, const ReclaimStallReading& reading, CgroupIdMap& ids, const Forget& forget);

  ReclaimStallOptions options_;
  // Counts of forgotten cgroups, still part of the node totals.
  std::array<StallDistribution, kStallKindCount> retired_{};
  std::uint64_t retired_victims_ = 0;
};

}  // namespace memdiag
