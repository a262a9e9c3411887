#include "probes/analysis/pressure_roles.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "probes/analysis/saturating.hpp"

namespace memdiag::analysis {

double contribution_ratio(const PressureShares& shares, const RoleSettings& roles) {
  // The promise keeps its weight whatever else is known; held and growth share the rest, or
  // whichever of them is known takes all of it.
  const double promise_weight = shares.promise ? std::clamp(roles.promise_weight, 0.0, 1.0) : 0.0;
  const int others = (shares.held ? 1 : 0) + (shares.growth ? 1 : 0);
  if (others == 0) return shares.promise ? *shares.promise : 0;
  const double each = (1 - promise_weight) / others;
  return each * (shares.held.value_or(0) + shares.growth.value_or(0)) + promise_weight * shares.promise.value_or(0);
}

bool contributes(const PressureShares& shares, std::uint64_t footprint_bytes, double growth_bytes_per_second,
                 std::uint64_t scope_size_bytes, const RoleSettings& roles) {
  const double size_floor = roles.contributor_min_scope_ratio * static_cast<double>(scope_size_bytes);
  const double half_life_s = std::chrono::duration<double>(roles.growth_half_life).count();
  const bool sizeable = static_cast<double>(footprint_bytes) >= size_floor ||
                        std::max(0.0, growth_bytes_per_second) * half_life_s >= size_floor;
  return sizeable && (shares.held.value_or(0) >= roles.contributor_min_ratio ||
                      shares.growth.value_or(0) >= roles.contributor_min_ratio);
}

std::vector<ScopeMember> rank_members(const std::vector<MemberFigures>& members, VerdictLevel scope_level,
                                      std::uint64_t scope_size_bytes, const RoleSettings& roles,
                                      const StallThresholds& stall) {
  std::vector<ScopeMember> ranked;
  if (scope_level == VerdictLevel::kNone || members.empty()) return ranked;
  double held = 0, grown = 0, promised = 0;
  for (const MemberFigures& m : members) {
    held += static_cast<double>(m.footprint_bytes);
    grown += std::max(0.0, m.growth_bytes_per_second);
    promised += static_cast<double>(m.unbacked_promise_bytes.value_or(0));
  }
  std::vector<ScopeMember> contributors, victims;
  for (const MemberFigures& m : members) {
    // Without growth anywhere, size alone tells; without anything held, growth alone.
    PressureShares shares;
    if (held > 0) shares.held = static_cast<double>(m.footprint_bytes) / held;
    if (grown > 0) shares.growth = std::max(0.0, m.growth_bytes_per_second) / grown;
    if (promised > 0) shares.promise = static_cast<double>(m.unbacked_promise_bytes.value_or(0)) / promised;
    ScopeMember out;
    out.cgroup = std::string(m.cgroup);
    out.contribution_ratio = contribution_ratio(shares, roles);
    out.footprint_bytes = m.footprint_bytes;
    out.growth_bytes_per_second = m.growth_bytes_per_second;
    out.relief_bytes = m.relief_bytes;
    out.stall_ratio = m.stall_ratio;
    out.refault_ratio = m.refault_ratio;
    out.unbacked_promise_bytes = m.unbacked_promise_bytes;
    const bool stalls = m.stall_ratio && *m.stall_ratio >= stall.psi_some[0];
    const bool thrashes = m.refault_ratio && *m.refault_ratio >= stall.refault_ratio[0];
    if (contributes(shares, m.footprint_bytes, m.growth_bytes_per_second, scope_size_bytes, roles)) {
      out.role = PressureRole::kContributor;
      contributors.push_back(std::move(out));
    } else if (stalls || thrashes) {
      out.role = PressureRole::kVictim;
      victims.push_back(std::move(out));
    }
  }
  std::stable_sort(contributors.begin(), contributors.end(), [](const ScopeMember& a, const ScopeMember& b) {
    return a.contribution_ratio > b.contribution_ratio;
  });
  // Most stalled first; thrashing breaks ties (and orders those without a stall figure).
  std::stable_sort(victims.begin(), victims.end(), [](const ScopeMember& a, const ScopeMember& b) {
    const double sa = a.stall_ratio.value_or(0), sb = b.stall_ratio.value_or(0);
    if (sa != sb) return sa > sb;
    return a.refault_ratio.value_or(0) > b.refault_ratio.value_or(0);
  });
  if (contributors.size() > roles.max_members) contributors.resize(roles.max_members);
  if (victims.size() > roles.max_members) victims.resize(roles.max_members);
  ranked = std::move(contributors);
  for (ScopeMember& v : victims) ranked.push_back(std::move(v));
  return ranked;
}

std::uint64_t shortfall_bytes(std::uint64_t size_bytes, std::uint64_t available_bytes, const RoleSettings& roles) {
  const double target = roles.headroom_ratio * static_cast<double>(size_bytes);
  const double missing = target - static_cast<double>(available_bytes);
  return saturating_bytes(missing);
}

}  // namespace memdiag::analysis
