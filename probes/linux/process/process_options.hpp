// SPDX-License-Identifier: Apache-2.0
// The process source's options (`sources.processes` in the config).
#pragma once

#include <cstddef>
#include <string>

namespace memdiag {

// The eBPF task iterator, /proc, or the iterator when it loads and /proc otherwise.
enum class ProcessScanMode { kAuto, kBpfIter, kProcfs };

struct ProcessOptions {
  ProcessScanMode process_scan = ProcessScanMode::kAuto;
  std::string btf_path;  // for the task iterator; "" = /sys/kernel/btf/vmlinux
  // What to export (see probes/core/process_selection.hpp).
  std::size_t top_processes = 10;
  double map_areas_threshold = 0.8;
  std::size_t max_above_threshold = 100;
  std::size_t max_cgroups = 50;  // per-cgroup sums (the series budget, docs/operations.md "Series per node")
  bool operator==(const ProcessOptions&) const = default;
};

}  // namespace memdiag
