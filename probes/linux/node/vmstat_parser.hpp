// SPDX-License-Identifier: Apache-2.0
// /proc/vmstat: "name value" per line. Event counters and nr_* levels share the file; which
// is which is kernel knowledge kept here, next to the parser.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "probes/core/expected.hpp"
#include "probes/linux/flat_keyed_parser.hpp"

namespace memdiag {

using VmstatEntry = KeyedValue;

inline Status parse_vmstat(std::string_view text, std::vector<VmstatEntry>& out) { return parse_flat_keyed(text, out); }

// True for cumulative event counters (pgscan_direct, allocstall_normal, oom_kill, nr_dirtied),
// false for levels (nr_free_pages, workingset_nodes, nr_dirty_threshold).
bool vmstat_field_is_counter(std::string_view name);

}  // namespace memdiag
