// SPDX-License-Identifier: Apache-2.0
#include "probes/analysis/overcommit_model.hpp"

#include <algorithm>

namespace memdiag::analysis {

namespace {

void add_reason(OvercommitVerdict& verdict, std::string_view code, double value, const LevelThresholds& thresholds) {
  const VerdictLevel level = level_reached(value, thresholds);
  if (level == VerdictLevel::kNone) return;
  verdict.reasons.push_back(
      VerdictReason{code, value, thresholds[static_cast<std::size_t>(level) - 1], level});
}

}  // namespace

OvercommitVerdict assess_overcommit(const SystemMemory& memory, const std::optional<OvercommitPolicy>& policy,
                                    std::optional<double> cgroup_limit_overcommit_ratio,
                                    const OvercommitThresholds& thresholds, const PromiseAdjustments& adjustments) {
  OvercommitVerdict v;
  v.mode_known = policy.has_value();
  v.mode = policy ? policy->mode : OvercommitMode::kHeuristic;
  v.supply_bytes = memory.physical_available_bytes + memory.swap_free_bytes;
  v.cgroup_limit_overcommit_ratio = cgroup_limit_overcommit_ratio;
  v.cgroups_over_limit = adjustments.cgroups_over_limit;
  v.cgroups_over_limit_total = adjustments.cgroups_over_limit_total;
  v.uncharged_reservation_processes = adjustments.uncharged_reservation_processes;
  v.uncharged_reservation_bytes = adjustments.uncharged_reservation_bytes;

  if (memory.commit_charge_bytes) {
    const double charge = static_cast<double>(*memory.commit_charge_bytes);
    if (memory.commit_limit_bytes && *memory.commit_limit_bytes > 0) {
      v.commit_limit_ratio = charge / static_cast<double>(*memory.commit_limit_bytes);
    }
    const std::uint64_t backing = memory.physical_total_bytes + memory.swap_total_bytes;
    if (backing > 0) v.commit_ratio = charge / static_cast<double>(backing);
    if (memory.commit_backed_bytes) {
      v.unbacked_bytes = *memory.commit_charge_bytes > *memory.commit_backed_bytes
                             ? *memory.commit_charge_bytes - *memory.commit_backed_bytes
                             : 0;
      // What cannot come due, apart: shared copy-on-write pages first (they are in the node's
      // figure, not in any process's), then what the limits cap (out of the processes' own).
      std::uint64_t charged = *v.unbacked_bytes;
      v.cow_shared_bytes = adjustments.cow_shared_bytes;
      if (v.cow_shared_bytes) charged -= std::min(charged, *v.cow_shared_bytes);
      v.capped_by_limits_bytes = std::min(charged, adjustments.capped_by_limits_bytes);
      charged -= v.capped_by_limits_bytes;
      v.charged_unbacked_bytes = charged;
      if (v.supply_bytes > 0) {
        v.unbacked_to_supply_ratio = static_cast<double>(charged) / static_cast<double>(v.supply_bytes);
      }
    }
  }

  if (v.mode == OvercommitMode::kNever) {
    if (v.commit_limit_ratio) {
      // Critical also when less than the headroom bound is left, whatever the ratio: on a small
      // node 100 MiB is a few allocations away from ENOMEM. The bound then reads as the ratio
      // at which that headroom is reached.
      LevelThresholds bounds = thresholds.commit_limit_ratio;
      const double limit = static_cast<double>(*memory.commit_limit_bytes);
      const double headroom_bound = (limit - static_cast<double>(thresholds.commit_headroom_critical_bytes)) / limit;
      bounds[3] = std::min(bounds[3], headroom_bound);
      add_reason(v, overcommit_reason::kCommitLimit, *v.commit_limit_ratio, bounds);
    }
  } else if (v.unbacked_to_supply_ratio) {
    add_reason(v, overcommit_reason::kUnbackedPromises, *v.unbacked_to_supply_ratio, thresholds.unbacked_to_supply);
    const double past_supply = thresholds.unbacked_to_supply[static_cast<std::size_t>(VerdictLevel::kMedium) - 1];
    if (v.mode == OvercommitMode::kAlways && *v.unbacked_to_supply_ratio >= past_supply) {
      // Context, not a level of its own (low): why nothing stopped the promises piling up.
      v.reasons.push_back(VerdictReason{overcommit_reason::kOvercommitAlways, *v.unbacked_to_supply_ratio,
                                        past_supply, VerdictLevel::kLow});
    }
  }
  if (cgroup_limit_overcommit_ratio) {
    add_reason(v, overcommit_reason::kCgroupLimits, *cgroup_limit_overcommit_ratio, thresholds.cgroup_limit_overcommit);
  }

  std::stable_sort(v.reasons.begin(), v.reasons.end(),
                   [](const VerdictReason& a, const VerdictReason& b) { return a.level > b.level; });
  for (const VerdictReason& r : v.reasons) v.level = std::max(v.level, r.level);
  return v;
}

}  // namespace memdiag::analysis
