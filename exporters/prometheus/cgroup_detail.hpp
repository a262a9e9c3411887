// SPDX-License-Identifier: Apache-2.0
// Which exported cgroups get their detail series (memory.stat keys, PSI averages): the ones that
// matter now. A busy node has thousands of cgroups and the cap exports hundreds; the detail of
// every one is ~20 series each, most of it about cgroups nobody is looking at. Every exported
// cgroup keeps its basic series (usage, limit, fill, failcnt, events, PSI totals, verdicts).
#pragma once

#include <cstddef>
#include <string_view>
#include <unordered_set>

#include "probes/core/cgroup_section.hpp"
#include "probes/core/derived_figures.hpp"

namespace memdiag::prom {

// The first `top` cgroups of the section (its order is the importance ranking: pressure, then
// how near its limit, then size), and beyond them any that stall (a scope at level low or
// above), has a role in a stalling scope (contributor, victim), or is within 10 % of its limit.
inline constexpr std::size_t kDetailedTopCgroups = 10;
std::unordered_set<std::string_view> detailed_cgroups(const CgroupSection& section, const DerivedFigures& derived,
                                                      std::size_t top = kDetailedTopCgroups);

}  // namespace memdiag::prom
