// SPDX-License-Identifier: Apache-2.0
// Which promises can come due on the node (the overcommit model's input): a process in a cgroup
// can draw from the node at most what the limits on its way up still allow (the limit tree's
// headroom: the lowest of limit - usage over the cgroup and its limited ancestors). So each
// limited subtree charges the node min(its processes' unbacked promise, its headroom),
// innermost limits first; the rest is capped away. A cgroup whose processes' private commit
// (resident, swapped and unbacked) exceeds its effective limit is its own risk: touching it all
// is an OOM kill at its ceiling, even with every page of cache reclaimed. (Against the headroom
// instead, a cgroup full of page cache would be listed for promises its cache can pay.)
//
// Inputs are bounded by their sections: a cgroup left out of the process section's cgroup sums
// (its cap) or of the cgroup section's limits (its cap) is simply not capped, so the node's
// figure errs towards the promise, never away from it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "probes/core/cgroup_section.hpp"
#include "probes/core/overcommit_verdict.hpp"
#include "probes/core/process_section.hpp"

namespace memdiag::analysis {

struct PromiseCapping {
  // Promised by processes of limited cgroups beyond what the limits let them draw.
  std::uint64_t capped_by_limits_bytes = 0;
  // Limited cgroups whose private commit (theirs and their descendants') exceeds their
  // effective limit, the largest excess first, at most max_listed; total counts all of them.
  std::vector<CgroupOverLimit> over_limit;
  std::size_t over_limit_total = 0;
};

PromiseCapping cap_promises(const std::vector<CgroupLimit>& limits, const std::vector<CgroupProcessTotals>& cgroups,
                            std::size_t max_listed = 10);

}  // namespace memdiag::analysis
