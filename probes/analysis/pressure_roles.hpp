// Contributors and victims within a pressured scope (issue 14), judged from each member's
// figures (probes/analysis/cgroup_figures.hpp):
// - contribution: half the member's share of the footprint the members hold (anon + shmem +
//   swap: what reclaim cannot take back without swap), half its share of the footprint's growth.
//   Size counts as well as growth: a job that has finished growing and holds its memory still
//   presses on everyone else's page cache (oomd likewise kills by size or growth). Where the
//   members hold unbacked promises (process scan), their share of those weighs `promise_weight`
//   (20 %) and the other two share the rest: a promise is pressure that has not come due yet
//   (the seed's story), so it orders contributors that hold and grow alike; it does not make one.
// - a **contributor** holds or grows at least `contributor_min_ratio` of it, and is of some
//   size for the scope: it holds, or grows per growth half-life, `contributor_min_scope_ratio`
//   of the scope's size (a 240 KiB job alone in a 512 MiB cgroup is not what stalls it: seen in
//   a real recording, tests/fixtures/recordings/page-cache-streaming); a **victim** is
//   any other member that stalls (PSI some, or eBPF stall time, at the stall model's low
//   threshold) or thrashes (refaults at the low threshold): it suffers without being the cause.
// - **relief**: what stopping a contributor would free for certain (its anon and swap), against
//   the scope's shortfall (what is missing to `headroom_ratio` of the scope free).
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
  double contributor_min_ratio = 0.10;
  double contributor_min_scope_ratio = 0.01;
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
  std::uint64_t footprint_bytes = 0;
  double growth_bytes_per_second = 0;
  std::uint64_t relief_bytes = 0;
  std::optional<double> stall_ratio;
  std::optional<double> refault_ratio;
  std::optional<std::uint64_t> unbacked_promise_bytes;
};

// A member's shares of what its scope's members hold, grow and were promised; absent where no
// member has any of it. The contribution weighs those present: held and growth alike, the
// promise `promise_weight`; the members' contributions sum to 1.
struct PressureShares {
  std::optional<double> held;
  std::optional<double> growth;
  std::optional<double> promise;
};
double contribution_ratio(const PressureShares& shares, const RoleSettings& roles);

// Whether a member with these shares and figures is a contributor: it holds or grows at least
// contributor_min_ratio of the members' total, and holds (or grows per half-life)
// contributor_min_scope_ratio of the scope (`scope_size_bytes`, 0: no floor).
bool contributes(const PressureShares& shares, std::uint64_t footprint_bytes, double growth_bytes_per_second,
                 std::uint64_t scope_size_bytes, const RoleSettings& roles);

// The ranked members with a role (at most max_members contributors and max_members victims);
// empty when `scope_level` is none. `scope_size_bytes`: the node's memory or the cgroup's limit
// (0: unknown, no size floor).
std::vector<ScopeMember> rank_members(const std::vector<MemberFigures>& members, VerdictLevel scope_level,
                                      std::uint64_t scope_size_bytes, const RoleSettings& roles,
                                      const StallThresholds& stall);

// What is missing to the headroom target of a scope of `size_bytes` with `available_bytes`.
std::uint64_t shortfall_bytes(std::uint64_t size_bytes, std::uint64_t available_bytes, const RoleSettings& roles);

}  // namespace memdiag::analysis
