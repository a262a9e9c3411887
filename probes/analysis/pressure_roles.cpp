// SPDX-License-Identifier: Apache-2.0
#include "probes/analysis/pressure_roles.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
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

bool sizeable(std::uint64_t footprint_bytes, double growth_bytes_per_second, std::uint64_t scope_size_bytes,
              const RoleSettings& roles) {
  const double size_floor = roles.contributor_min_scope_ratio * static_cast<double>(scope_size_bytes);
  const double half_life_s = std::chrono::duration<double>(roles.growth_half_life).count();
  return static_cast<double>(footprint_bytes) >= size_floor ||
         std::max(0.0, growth_bytes_per_second) * half_life_s >= size_floor;
}

Candidate candidate(std::uint64_t relief_bytes, double growth_bytes_per_second, bool eligible,
                    const RoleSettings& roles) {
  const double half_life_s = std::chrono::duration<double>(roles.growth_half_life).count();
  return Candidate{relief_bytes,
                   static_cast<double>(relief_bytes) + std::max(0.0, growth_bytes_per_second) * half_life_s, eligible};
}

Cover covering_set(const std::vector<Candidate>& candidates, std::uint64_t shortfall_bytes, std::size_t most,
                   double similar_ratio) {
  Cover cover;
  std::vector<std::size_t> order(candidates.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return candidates[a].projected_bytes > candidates[b].projected_bytes;
  });
  std::uint64_t relief = 0;
  std::size_t rest = 0;  // where the walk stopped
  for (; rest < order.size(); ++rest) {
    const Candidate& c = candidates[order[rest]];
    if (!c.eligible || c.projected_bytes <= 0) continue;
    if (!cover.taken.empty() && (relief >= shortfall_bytes || cover.taken.size() >= most)) break;
    cover.taken.push_back(order[rest]);
    relief += c.relief_bytes;
  }
  if (cover.taken.empty()) return cover;
  const double last = candidates[cover.taken.back()].projected_bytes;
  for (; rest < order.size(); ++rest) {
    const Candidate& c = candidates[order[rest]];
    if (c.eligible && c.projected_bytes >= similar_ratio * last) ++cover.similar;
  }
  return cover;
}

RankedMembers rank_members(const std::vector<MemberFigures>& members, VerdictLevel scope_level,
                           const ScopeWhole& scope, const RoleSettings& roles, const StallThresholds& stall) {
  RankedMembers ranked;
  double held = 0, grown = 0, promised = 0;
  for (const MemberFigures& m : members) {
    held += static_cast<double>(m.footprint_bytes);
    grown += std::max(0.0, m.growth_bytes_per_second);
    promised += static_cast<double>(m.unbacked_promise_bytes.value_or(0));
  }
  // The members' sums stand in where the scope's own figure is smaller (read at another moment,
  // or unknown); what the scope holds beyond them is the remainder.
  const double whole_held = std::max(held, static_cast<double>(scope.footprint_bytes));
  const double whole_grown = std::max(grown, std::max(0.0, scope.growth_bytes_per_second));
  const double whole_promised = std::max(promised, static_cast<double>(scope.unbacked_promise_bytes));
  ranked.footprint_bytes = saturating_bytes(whole_held);
  ranked.unattributed_bytes = saturating_bytes(whole_held - held);
  if (scope_level == VerdictLevel::kNone || (members.empty() && ranked.unattributed_bytes == 0)) return ranked;

  const auto shares_of = [&](double footprint, double growth, double promise) {
    PressureShares shares;
    if (whole_held > 0) shares.held = footprint / whole_held;
    if (whole_grown > 0) shares.growth = std::max(0.0, growth) / whole_grown;
    if (whole_promised > 0) shares.promise = promise / whole_promised;
    return shares;
  };
  std::vector<ScopeMember> all;
  std::vector<Candidate> candidates;
  all.reserve(members.size());
  candidates.reserve(members.size() + 1);
  for (const MemberFigures& m : members) {
    const PressureShares shares = shares_of(static_cast<double>(m.footprint_bytes), m.growth_bytes_per_second,
                                            static_cast<double>(m.unbacked_promise_bytes.value_or(0)));
    ScopeMember out;
    out.cgroup = std::string(m.cgroup);
    out.contribution_ratio = contribution_ratio(shares, roles);
    out.footprint_bytes = m.footprint_bytes;
    out.swap_bytes = m.swap_bytes;
    out.growth_bytes_per_second = m.growth_bytes_per_second;
    out.relief_bytes = m.relief_bytes;
    out.relief_swap_bytes = m.swap_bytes;
    out.stall_ratio = m.stall_ratio;
    out.refault_ratio = m.refault_ratio;
    out.unbacked_promise_bytes = m.unbacked_promise_bytes;
    candidates.push_back(candidate(out.relief_bytes, m.growth_bytes_per_second,
                                   sizeable(m.footprint_bytes, m.growth_bytes_per_second, scope.size_bytes, roles),
                                   roles));
    all.push_back(std::move(out));
  }
  // The remainder, as one more candidate: its RAM is anon or shmem held outside the members.
  const double remainder_growth = std::max(0.0, whole_grown - grown);
  candidates.push_back(candidate(ranked.unattributed_bytes, remainder_growth,
                                 sizeable(ranked.unattributed_bytes, remainder_growth, scope.size_bytes, roles), roles));

  std::vector<bool> contributor(all.size(), false);
  if (scope.short_of_memory) {
    const Cover cover = covering_set(candidates, scope.shortfall_bytes, roles.max_members, roles.similar_ratio);
    for (std::size_t i : cover.taken) {
      if (i == all.size()) {
        ranked.unattributed_contributes = true;
      } else {
        contributor[i] = true;
      }
    }
    ranked.similar_members = cover.similar;
  }
  std::vector<ScopeMember> contributors, victims;
  for (std::size_t i = 0; i < all.size(); ++i) {
    ScopeMember& m = all[i];
    const bool stalls = m.stall_ratio && *m.stall_ratio >= stall.psi_some[0];
    const bool thrashes = m.refault_ratio && *m.refault_ratio >= stall.refault_ratio[0];
    if (contributor[i]) {
      m.role = PressureRole::kContributor;
      contributors.push_back(std::move(m));
    } else if (stalls || thrashes) {
      m.role = PressureRole::kVictim;
      victims.push_back(std::move(m));
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
  if (victims.size() > roles.max_members) victims.resize(roles.max_members);
  ranked.members = std::move(contributors);
  for (ScopeMember& v : victims) ranked.members.push_back(std::move(v));
  return ranked;
}

std::uint64_t shortfall_bytes(std::uint64_t size_bytes, std::uint64_t available_bytes, const RoleSettings& roles) {
  const double target = roles.headroom_ratio * static_cast<double>(size_bytes);
  const double missing = target - static_cast<double>(available_bytes);
  return saturating_bytes(missing);
}

}  // namespace memdiag::analysis
