// SPDX-License-Identifier: Apache-2.0
#include "probes/analysis/limit_overcommit.hpp"

namespace memdiag::analysis {

std::optional<double> limit_overcommit_ratio(const CgroupSection& cgroups, const SystemMemory& memory) {
  if (memory.physical_total_bytes == 0) return std::nullopt;
  // Recordings made before the limit tree have only the leaf sum.
  const std::uint64_t limits = cgroups.effective_limits_sum_bytes.value_or(cgroups.leaf_limits_sum_bytes);
  return static_cast<double>(limits) / static_cast<double>(memory.physical_total_bytes);
}

}  // namespace memdiag::analysis
