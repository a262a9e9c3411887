// SPDX-License-Identifier: Apache-2.0
// The kernel's "flat keyed" files: one "name value" pair per line, values unsigned decimal.
// /proc/vmstat, cgroup memory.stat and memory.events, v1 memory.oom_control all look like this.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "probes/core/expected.hpp"

namespace memdiag {

struct KeyedValue {
  std::string_view name;  // points into the input
  std::uint64_t value;
};

// Any malformed line, duplicate name, overflow or missing final newline is an error naming
// the line. `out` is cleared first and its capacity reused.
Status parse_flat_keyed(std::string_view text, std::vector<KeyedValue>& out);

}  // namespace memdiag
