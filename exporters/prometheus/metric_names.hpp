// SPDX-License-Identifier: Apache-2.0
// Kernel field names turned into the metric names of the naming contract (docs/development.md). Kernel spelling
// (MemTotal, Active(anon), Committed_AS) never reaches Prometheus as is: CamelCase fails
// promtool's lint, parentheses are not legal in names.
#pragma once

#include <string>
#include <string_view>

#include "probes/core/field_table.hpp"

namespace memdiag::prom {

// "MemTotal" -> "mem_total", "Active(anon)" -> "active_anon", "Committed_AS" -> "committed_as",
// "DirectMap2M" -> "direct_map_2m", "KReclaimable" -> "k_reclaimable", "NFS_Unstable" -> "nfs_unstable".
std::string snake_case(std::string_view kernel_name);

// memdiag_meminfo_<snake>_bytes for kB fields, memdiag_meminfo_<snake>_pages for page counts.
std::string meminfo_metric_name(std::string_view kernel_name, FieldKind kind);

// memdiag_vmstat_<name>_total for counters, memdiag_vmstat_<name> for levels.
std::string vmstat_metric_name(std::string_view kernel_name, FieldKind kind);

}  // namespace memdiag::prom
