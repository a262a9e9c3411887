// One sample of the node: plain structs, one section per source. A section is absent when
// its source is disabled or failed this time, so nothing stale is ever exported.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "probes/core/canary_section.hpp"
#include "probes/core/cgroup_section.hpp"
#include "probes/core/field_table.hpp"
#include "probes/core/process_section.hpp"
#include "probes/core/reclaim_stall_section.hpp"
#include "probes/linux/pressure_parser.hpp"

namespace memdiag {

enum class PsiResourceKind : std::uint8_t { kMemory = 0, kIo = 1, kCpu = 2 };
inline constexpr std::array<std::string_view, 3> kPsiResourceNames = {"memory", "io", "cpu"};

struct PressureSection {
  // Indexed by PsiResourceKind; a resource is absent if its file is.
  std::array<std::optional<PsiResource>, 3> resources;
};

struct VmSysctlValue {
  std::string_view name;  // static storage: the list of sysctls the source knows
  double value;           // ints and unsigned longs alike (dirty_bytes can exceed INT64_MAX)
};

struct VmSysctlSection {
  std::vector<VmSysctlValue> values;
};

struct SourceStatus {
  std::string name;
  bool up = false;
  double duration_seconds = 0;
  std::string error;  // why it is down; empty when up
};

struct Snapshot {
  std::uint64_t sequence = 0;
  std::chrono::system_clock::time_point taken_at;

  std::optional<FieldTable> meminfo;
  std::optional<FieldTable> vmstat;
  std::optional<PressureSection> pressure;
  std::optional<VmSysctlSection> vm_sysctl;
  std::optional<CgroupSection> cgroups;
  std::optional<ReclaimStallSection> reclaim_stall;
  std::optional<ProcessSection> processes;
  std::optional<CanarySection> canary;

  std::vector<SourceStatus> sources;
};

}  // namespace memdiag
