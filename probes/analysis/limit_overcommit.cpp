#include "probes/analysis/limit_overcommit.hpp"

namespace memdiag::analysis {

std::optional<double> limit_overcommit_ratio(const CgroupSection& cgroups, const SystemMemory& memory) {
  if (memory.physical_total_bytes == 0) return std::nullopt;
  return static_cast<double>(cgroups.leaf_limits_sum_bytes) / static_cast<double>(memory.physical_total_bytes);
}

}  // namespace memdiag::analysis
