// SPDX-License-Identifier: Apache-2.0
// One sample of the node: plain structs, one section per source. A section is absent when
// its source is disabled or failed this time, so nothing stale is ever exported.
//
// Two kinds of section: OS-neutral ones that every platform fills (system memory and commit,
// per-process memory), which the portable analysis reads, and the kernel-specific ones (every
// meminfo and vmstat field, PSI, cgroups, eBPF stalls), which keep everything the kernel says.
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
#include "probes/core/derived_figures.hpp"
#include "probes/core/pressure_section.hpp"
#include "probes/core/process_memory_section.hpp"
#include "probes/core/process_section.hpp"
#include "probes/core/reclaim_stall_section.hpp"
#include "probes/core/system_memory_section.hpp"
#include "probes/core/windows_memory_section.hpp"

namespace memdiag {

struct VmSysctlValue {
  std::string_view name;  // static storage: the list of sysctls the source knows
  double value;           // ints and unsigned longs alike (dirty_bytes can exceed INT64_MAX)

  bool operator==(const VmSysctlValue&) const = default;
};

struct VmSysctlSection {
  std::vector<VmSysctlValue> values;

  bool operator==(const VmSysctlSection&) const = default;
};

struct SourceStatus {
  std::string name;
  bool up = false;
  double duration_seconds = 0;
  std::string error;  // why it is down; empty when up

  bool operator==(const SourceStatus&) const = default;
};

struct Snapshot {
  std::uint64_t sequence = 0;
  std::chrono::system_clock::time_point taken_at;

  // OS-neutral: Linux fills system_memory from meminfo, overcommit_policy from the vm sysctls
  // and process_memory from the process scan.
  std::optional<SystemMemory> system_memory;
  std::optional<OvercommitPolicy> overcommit_policy;
  std::optional<ProcessMemorySection> process_memory;

  // Kernel-specific.
  std::optional<FieldTable> meminfo;
  std::optional<FieldTable> vmstat;
  std::optional<PressureSection> pressure;
  std::optional<VmSysctlSection> vm_sysctl;
  std::optional<CgroupSection> cgroups;
  std::optional<ReclaimStallSection> reclaim_stall;
  std::optional<ProcessSection> processes;
  std::optional<CanarySection> canary;
  std::optional<WindowsMemorySection> windows_memory;
  std::optional<WindowsPagingSection> windows_paging;

  std::vector<SourceStatus> sources;

  // Computed from the sections above by probes/analysis once every source has sampled.
  DerivedFigures derived;
};

}  // namespace memdiag
