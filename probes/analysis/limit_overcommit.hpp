// SPDX-License-Identifier: Apache-2.0
// How far the memory limits given to cgroups exceed the memory there is: the hard limits as
// they bind (CgroupSection::effective_limits_sum_bytes: each capped subtree counted once, at
// the lower of its limit and its limited descendants' sum) over physical memory. Above 1 the limits are promises
// that cannot all be kept at once; the kubelet and systemd allow it (limits are not
// reservations), which is why it is a risk figure and not an error.
#pragma once

#include <optional>

#include "probes/core/cgroup_section.hpp"
#include "probes/core/system_memory_section.hpp"

namespace memdiag::analysis {

// Absent when physical memory is unknown (or reported as 0).
std::optional<double> limit_overcommit_ratio(const CgroupSection& cgroups, const SystemMemory& memory);

}  // namespace memdiag::analysis
