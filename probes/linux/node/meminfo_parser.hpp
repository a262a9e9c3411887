// SPDX-License-Identifier: Apache-2.0
// /proc/meminfo: "Name:   value [kB]" per line. Every field is kept, including ones this
// code has never heard of, so new kernels' fields reach the exporter without a change here.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "probes/core/expected.hpp"

namespace memdiag {

struct MeminfoEntry {
  std::string_view name;   // kernel spelling, e.g. "Active(anon)"; points into the input
  std::uint64_t value;     // bytes when in_bytes, else a plain count (HugePages_*)
  bool in_bytes;
};

// Parses the whole file; any malformed line, duplicate name or overflow is an error naming
// the line. `out` is cleared first and its capacity reused.
Status parse_meminfo(std::string_view text, std::vector<MeminfoEntry>& out);

}  // namespace memdiag
