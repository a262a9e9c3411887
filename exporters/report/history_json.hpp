// SPDX-License-Identifier: Apache-2.0
// The last minutes of the key signals (/api/v1/history, the status page's charts), from the
// snapshot ring: one entry per snapshot, oldest first, as parallel arrays (an object per entry
// would repeat every key 300 times). A figure a snapshot does not have (no PSI before Linux
// 4.20 or on Windows, no vmstat on Windows, no commit figures, the first entry's rates) is
// null, never 0; a rate whose counter went down between two snapshots (a reset) is null too.
// Schema (docs/diagnose.md "Status page"):
//   {"schema":"memdiag.history/v1",
//    "taken_at_ms":[...],               Unix time of each snapshot, milliseconds
//    "stall_level":[...],               the node's stall level, 0 none .. 4 critical
//    "overcommit_level":[...],          the overcommit risk level, 0 .. 4
//    "psi_some_ratio":[...],            memory PSI some: stall time per second since the
//    "psi_full_ratio":[...],              previous snapshot (0..1; from the `total` counters)
//    "available_bytes":[...],           MemAvailable (Windows: available physical memory)
//    "commit_charge_bytes":[...],       Committed_AS (Windows: the commit charge)
//    "commit_limit_bytes":[...],        CommitLimit (Windows: the commit limit)
//    "direct_scan_pages_per_second":[...],   vmstat pgscan_direct
//    "refault_file_pages_per_second":[...],  vmstat workingset_refault_file (before 5.9:
//                                              workingset_refault)
//    "pages_input_per_second":[...]}    Windows: pages read in to resolve hard faults
// Ratios are rounded to 1e-4 and rates to 0.1: ~25 KB for a ring of 300.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "probes/core/snapshot_store.hpp"

namespace memdiag::report {

inline constexpr std::string_view kHistorySchema = "memdiag.history/v1";

// `ring`: consecutive snapshots, oldest first (SnapshotStore::recent()); null entries are
// skipped. Pure: reads nothing but the snapshots.
std::string render_history_json(const std::vector<SnapshotPtr>& ring);

}  // namespace memdiag::report
