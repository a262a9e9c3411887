// SPDX-License-Identifier: Apache-2.0
// The parts of the reclaim-stall probe that attach on their own: one per stall kind (the list of
// probes/core/stall_kinds.h), then the OOM victim program. A unit is its programs in
// reclaim_stall.bpf.c (tp_btf and classic tracepoint, each for the unit's tracepoints); the
// probe loads one mode per unit, so a kernel without one unit's tracepoints keeps the others.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

#include "probes/core/stall_kind.hpp"

namespace memdiag {

struct ReclaimStallUnit {
  std::string_view name;                      // the kind's name, or "OOM victims"
  std::string_view group;                     // tracefs events/<group>/
  std::array<std::string_view, 2> tracepoints;  // begin and end, or one and ""
};

inline constexpr std::size_t kOomVictimsUnit = kStallKindCount;
inline constexpr std::size_t kReclaimStallUnits = kStallKindCount + 1;

#define MEMDIAG_UNIT_BEGIN_END_(ID, Id, name, group, begin, end) ReclaimStallUnit{#name, #group, {#begin, #end}},
#define MEMDIAG_UNIT_AFTER_WAIT_(ID, Id, name, group, tracepoint) ReclaimStallUnit{#name, #group, {#tracepoint, ""}},
// Index = StallKind for the kinds; kOomVictimsUnit last.
inline constexpr std::array<ReclaimStallUnit, kReclaimStallUnits> kReclaimStallUnitTable = {
    MEMDIAG_STALL_KINDS(MEMDIAG_UNIT_BEGIN_END_, MEMDIAG_UNIT_AFTER_WAIT_)  //
    ReclaimStallUnit{"OOM victims", "oom", {"mark_victim", ""}},
};
#undef MEMDIAG_UNIT_BEGIN_END_
#undef MEMDIAG_UNIT_AFTER_WAIT_

}  // namespace memdiag
