// SPDX-License-Identifier: Apache-2.0
// The cgroup hierarchy's hard limits as they bind: a cgroup can never use more than the lowest
// limit on its way up to the root, so a child's limit under a smaller parent limit is no
// promise of memory, and the parent's subtree as a whole is capped at the parent's limit.
// From every discovered cgroup (path, own limit, usage) it gives each limited cgroup its
// effective limit and headroom, and the sum of the limits counting each capped subtree once.
// Pure, so it is tested without a kernel; the cgroup source calls it once per sample over the
// cgroups it discovered (bounded by discovery's depth and patterns).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "probes/core/cgroup_section.hpp"

namespace memdiag {

struct CgroupLimitInput {
  std::string_view path;                    // "/" or "/a/b", relative to the hierarchy root
  std::optional<std::uint64_t> limit_bytes; // absent: no finite hard limit
  std::optional<std::uint64_t> usage_bytes;
};

struct CgroupLimitTree {
  // Bottom-up: a limited cgroup counts min(its limit, what its children count), a leaf its own
  // limit; an unlimited leaf under a limited ancestor counts as unbounded (the ancestor caps
  // it), elsewhere as nothing (as the leaf sum always did: unlimited cgroups promise no
  // memory). Processes of an internal cgroup (cgroup v1 allows them) are not seen: its subtree
  // counts what its children do.
  std::uint64_t effective_limits_sum_bytes = 0;
  std::vector<CgroupLimit> limits;  // see CgroupSection::limits
  std::size_t limits_dropped = 0;
};

// `max_limits` bounds the list (shallowest first, so every kept cgroup's limited ancestors are
// kept too); the sum covers every cgroup given.
CgroupLimitTree build_limit_tree(const std::vector<CgroupLimitInput>& cgroups, std::size_t max_limits);

}  // namespace memdiag
