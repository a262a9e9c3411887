// SPDX-License-Identifier: Apache-2.0
// The stall kinds of probes/core/stall_kinds.h for C++: an enum class with the same values as
// the BPF side's enum memdiag_stall_kind, and the names the exporter puts in `kind` labels.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "probes/core/stall_kinds.h"

namespace memdiag {

#define MEMDIAG_STALL_KIND_ENUMERATOR_(ID, Id, ...) k##Id = MEMDIAG_STALL_##ID,
enum class StallKind : std::uint8_t {
  MEMDIAG_STALL_KINDS(MEMDIAG_STALL_KIND_ENUMERATOR_, MEMDIAG_STALL_KIND_ENUMERATOR_)
};
#undef MEMDIAG_STALL_KIND_ENUMERATOR_

inline constexpr std::size_t kStallKindCount = MEMDIAG_STALL_KIND_COUNT;

#define MEMDIAG_STALL_KIND_NAME_(ID, Id, name, ...) #name,
// By kind, in enum order: "direct", "memcg", "softlimit", "compaction", "throttled".
inline constexpr std::array<std::string_view, kStallKindCount> kStallKindNames = {
    MEMDIAG_STALL_KINDS(MEMDIAG_STALL_KIND_NAME_, MEMDIAG_STALL_KIND_NAME_)};
#undef MEMDIAG_STALL_KIND_NAME_

constexpr std::string_view to_string(StallKind kind) {
  const auto index = static_cast<std::size_t>(kind);
  return index < kStallKindCount ? kStallKindNames[index] : std::string_view("unknown");
}

}  // namespace memdiag
