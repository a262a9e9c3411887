// SPDX-License-Identifier: Apache-2.0
// Contributors and victims within a pressured scope, judged from each member's figures
// (probes/analysis/cgroup_figures.hpp) against the WHOLE scope:
// - contribution: half the member's share of what the scope holds resident (anon + shmem: what
//   reclaim cannot take back without swap), half its share of the scope's footprint growth.
//   Size counts as well as growth: a job that has finished growing and holds its memory still
//   presses on everyone else's page cache (oomd likewise kills by size or growth). Where the
//   scope's processes hold unbacked promises, their share weighs `promise_weight` (20 %) and the
//   other two share the rest. The shares are of the scope, not of what its members hold: what no
//   member explains (the v1 root's or a cgroup's own processes, cgroups not exported, tmpfs no
//   process maps) is the unattributed remainder, a candidate like the members.
// - **contributors**, only while the scope is short of memory: the smallest set whose relief
//   covers the scope's shortfall (at least one, at most max_members), largest first by what
//   each will hold a growth half-life on (its relief plus its growth over the half-life: size
//   and growth in one unit, so a job that just grew 100 MiB does not outrank an idle holder of
//   a gigabyte, and a fast grower outranks its equal in size), among members of some size for the scope (holding, or growing per half-life,
//   `contributor_min_scope_ratio` of it: a 240 KiB job alone in a 512 MiB cgroup is not what
//   stalls it). oomd and systemd-oomd always name a candidate; with ten similar jobs no share
//   reaches a fixed floor, so there is none. When the remainder comes first, the processes say
//   who holds it. Members left out that contribute about as much as the last one named
//   (`similar_ratio` of it) are counted: "and N similar members".
// - **victims**: any other member that stalls (PSI some, or eBPF stall time, at the stall
//   model's low threshold) or thrashes (refaults at the low threshold).
// - **relief**: what stopping a contributor frees for certain in RAM (its resident anon), against
//   the shortfall (what is missing to `headroom_ratio` of the scope free); swap apart.
// Roles are given only while the scope's level is low or above.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "probes/analysis/stall_model.hpp"
#include "probes/core/pressure_scope.hpp"

namespace memdiag::analysis {

struct RoleSettings {
  double contributor_min_scope_ratio = 0.01;
  // A member left out is "similar" to the last contributor named when it contributes at least
  // this share of what that one does.
  double similar_ratio = 0.8;
  double promise_weight = 0.2;  // of the unbacked-promise share in the contribution (0 .. 1)
  // Headroom a scope should have: 10 % of it free (for the node, MemAvailable; for a cgroup,
  // its limit less its working set). The kubelet's default eviction threshold is 100 MiB, lmkd
  // and oomd act on pressure alone; a share scales from a 1 GiB pod to a 1 TiB node.
  double headroom_ratio = 0.10;
  std::chrono::milliseconds growth_half_life{10000};  // the growth EMA's
  std::size_t max_members = 5;  // contributors, and victims, named per scope
  bool operator==(const RoleSettings&) const = default;
};

// A member's figures, as the ranking needs them.
struct MemberFigures {
  std::string_view cgroup;
  std::uint64_t footprint_bytes = 0;  // resident anon + shmem
  std::uint64_t swap_bytes = 0;
  double growth_bytes_per_second = 0;
  std::uint64_t relief_bytes = 0;     // resident anon
  std::optional<double> stall_ratio;
  std::optional<double> refault_ratio;
  std::optional<std::uint64_t> unbacked_promise_bytes;
};

// A member's shares of what its scope holds, grows and was promised; absent where the scope has
// none of it. The contribution weighs those present: held and growth alike, the promise
// `promise_weight`; the members' contributions and the remainder's sum to 1.
struct PressureShares {
  std::optional<double> held;
  std::optional<double> growth;
  std::optional<double> promise;
};
double contribution_ratio(const PressureShares& shares, const RoleSettings& roles);

// Whether a member (or process) is of some size for its scope: it holds, or grows per growth
// half-life, contributor_min_scope_ratio of the scope's size (0: no floor).
bool sizeable(std::uint64_t footprint_bytes, double growth_bytes_per_second, std::uint64_t scope_size_bytes,
              const RoleSettings& roles);

// The whole scope, as the shares and the covering set need it.
struct ScopeWhole {
  std::uint64_t footprint_bytes = 0;   // resident anon + shmem of the whole scope
  double growth_bytes_per_second = 0;  // of that footprint, EMA
  std::uint64_t unbacked_promise_bytes = 0;
  std::uint64_t size_bytes = 0;        // the node's memory or the cgroup's limit (0: no size floor)
  std::uint64_t shortfall_bytes = 0;
  bool short_of_memory = false;
};

// One candidate for the covering set: its relief, what it will hold a growth half-life on (its
// relief plus its growth over the half-life: the order of the set), whether it may be named.
struct Candidate {
  std::uint64_t relief_bytes = 0;
  double projected_bytes = 0;
  bool eligible = true;
};
Candidate candidate(std::uint64_t relief_bytes, double growth_bytes_per_second, bool eligible,
                    const RoleSettings& roles);

// The covering set over `candidates`: the indices taken, largest projected relief first (at
// least one eligible, then until their relief covers `shortfall_bytes`, at most `most`), and how
// many left out would relieve at least similar_ratio of the last one taken.
struct Cover {
  std::vector<std::size_t> taken;
  std::size_t similar = 0;
};
Cover covering_set(const std::vector<Candidate>& candidates, std::uint64_t shortfall_bytes, std::size_t most,
                   double similar_ratio);

struct RankedMembers {
  std::vector<ScopeMember> members;     // contributors first, then victims
  std::size_t similar_members = 0;
  std::uint64_t footprint_bytes = 0;     // the scope's (or the members' sum, where larger)
  std::uint64_t unattributed_bytes = 0;  // the scope's footprint no member explains
  bool unattributed_contributes = false; // the remainder was taken into the covering set
};

// The ranked members with a role (at most max_members contributors and max_members victims);
// none when `scope_level` is none, no contributors when the scope is not short of memory.
RankedMembers rank_members(const std::vector<MemberFigures>& members, VerdictLevel scope_level,
                           const ScopeWhole& scope, const RoleSettings& roles, const StallThresholds& stall);

// What is missing to the headroom target of a scope of `size_bytes` with `available_bytes`.
std::uint64_t shortfall_bytes(std::uint64_t size_bytes, std::uint64_t available_bytes, const RoleSettings& roles);

}  // namespace memdiag::analysis
