#include "probes/analysis/pressure_roles.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "probes/analysis/saturating.hpp"

namespace memdiag::analysis {

std::vector<ScopeMember> rank_members(const std::vector<MemberFigures>& members, VerdictLevel scope_level,
                                      std::uint64_t scope_size_bytes, const RoleSettings& roles,
                                      const StallThresholds& stall) {
  std::vector<ScopeMember> ranked;
  if (scope_level == VerdictLevel::kNone || members.empty()) return ranked;
  double held = 0, grown = 0;
  for (const MemberFigures& m : members) {
    held += static_cast<double>(m.footprint_bytes);
    grown += std::max(0.0, m.growth_bytes_per_second);
  }
  std::vector<ScopeMember> contributors, victims;
  for (const MemberFigures& m : members) {
    const double held_share = held > 0 ? static_cast<double>(m.footprint_bytes) / held : 0;
    const double growth_share = grown > 0 ? std::max(0.0, m.growth_bytes_per_second) / grown : 0;
    // Without growth anywhere, size alone tells; without anything held, growth alone.
    double ratio = 0;
    if (held > 0 && grown > 0) {
      ratio = (held_share + growth_share) / 2;
    } else {
      ratio = held > 0 ? held_share : growth_share;
    }
    ScopeMember out;
    out.cgroup = std::string(m.cgroup);
    out.contribution_ratio = ratio;
    out.footprint_bytes = m.footprint_bytes;
    out.growth_bytes_per_second = m.growth_bytes_per_second;
    out.relief_bytes = m.relief_bytes;
    out.stall_ratio = m.stall_ratio;
    out.refault_ratio = m.refault_ratio;
    out.unbacked_promise_bytes = m.unbacked_promise_bytes;
    const double size_floor = roles.contributor_min_scope_ratio * static_cast<double>(scope_size_bytes);
    const double half_life_s = std::chrono::duration<double>(roles.growth_half_life).count();
    const bool sizeable = static_cast<double>(m.footprint_bytes) >= size_floor ||
                          std::max(0.0, m.growth_bytes_per_second) * half_life_s >= size_floor;
    const bool contributes =
        sizeable && (held_share >= roles.contributor_min_ratio || growth_share >= roles.contributor_min_ratio);
    const bool stalls = m.stall_ratio && *m.stall_ratio >= stall.psi_some[0];
    const bool thrashes = m.refault_ratio && *m.refault_ratio >= stall.refault_ratio[0];
    if (contributes) {
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
