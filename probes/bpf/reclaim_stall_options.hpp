// SPDX-License-Identifier: Apache-2.0
// The eBPF reclaim-stall source's options (`sources.reclaim_stall` in the config). Apart from
// the source so the config can be read by a build without eBPF.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "probes/core/stall_kind.hpp"

namespace memdiag {

struct ReclaimStallOptions {
  std::string btf_path;         // "" = /sys/kernel/btf/vmlinux
  bool tracefs_fallback = true;  // classic tracepoints where tp_btf programs cannot attach
  // How long a removed cgroup's stall histograms stay exported before they are folded into
  // the node totals.
  std::chrono::milliseconds retain_removed{300000};
  std::size_t max_cgroups = 50;
  // Not a config key: tests make these kinds look missing from the kernel
  // (ProbeOptions::unavailable_for_test).
  std::vector<StallKind> unavailable_for_test;
  bool operator==(const ReclaimStallOptions&) const = default;
};

}  // namespace memdiag
