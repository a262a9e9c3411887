// SPDX-License-Identifier: Apache-2.0
#include "probes/bpf/stall_attribution.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace memdiag {

void StallAttribution::retire(std::uint64_t id, const ReclaimStallReading& reading, CgroupIdMap& ids,
                              const Forget& forget) {
  // Exactly what the kernel no longer holds moves to the node totals, or it would count twice
  // or vanish; what could not be deleted is tried again at the next sample.
  const ReclaimStallProbe::Forgotten gone = forget(id);
  for (const auto& h : reading.histograms) {
    const auto kind = static_cast<std::size_t>(h.kind);
    if (h.memcg_id == id && gone.histograms[kind]) retired_[kind].add(StallDistribution{h.buckets, h.count, h.sum_ns});
  }
  for (const auto& v : reading.oom_victims) {
    if (v.memcg_id == id && gone.oom_victims) retired_victims_ += v.count;
  }
  if (gone.all()) ids.forget(id);
}

ReclaimStallSection StallAttribution::attribute(const ReclaimStallReading& reading, CgroupIdMap& ids,
                                                std::chrono::steady_clock::time_point now, const Forget& forget) {
  ReclaimStallSection section;
  section.node = retired_;
  section.node_oom_victims = retired_victims_;

  // Ids to fold into the node totals after this sample: never named (a cgroup created and
  // removed between two samples, or no hierarchy), or removed longer ago than retain_removed.
  std::unordered_set<std::uint64_t> retiring;
  auto named = [&](std::uint64_t id) -> const CgroupIdMap::Entry* {
    const CgroupIdMap::Entry* e = ids.find(id);
    if (e == nullptr || (e->removed() && now - e->removed_at > options_.retain_removed)) {
      retiring.insert(id);
      return nullptr;
    }
    return e;
  };

  struct Stalled {
    const std::string* path;
    std::array<const StallHistogram*, kStallKindCount> kinds{};
    std::uint64_t total_ns = 0;
  };
  std::unordered_map<std::uint64_t, Stalled> by_id;
  for (const auto& h : reading.histograms) {
    const auto kind = static_cast<std::size_t>(h.kind);
    section.node[kind].add(StallDistribution{h.buckets, h.count, h.sum_ns});
    const CgroupIdMap::Entry* e = named(h.memcg_id);
    if (e == nullptr) continue;
    Stalled& s = by_id[h.memcg_id];
    s.path = &e->path;
    s.kinds[kind] = &h;
    s.total_ns += h.sum_ns;
  }
  for (const auto& v : reading.oom_victims) {
    section.node_oom_victims += v.count;
    if (const CgroupIdMap::Entry* e = named(v.memcg_id)) section.oom_victims.push_back({e->path, v.count});
  }
  for (const RecentOomVictim& v : reading.recent_victims) {
    const CgroupIdMap::Entry* e = named(v.memcg_id);
    section.recent_oom_victims.push_back({v.sequence, v.pid, v.comm, e ? e->path : std::string()});
  }

  // Most stall time first; the path keeps the order stable.
  std::vector<const Stalled*> order;
  order.reserve(by_id.size());
  for (const auto& [id, s] : by_id) order.push_back(&s);
  std::sort(order.begin(), order.end(), [](const Stalled* a, const Stalled* b) {
    if (a->total_ns != b->total_ns) return a->total_ns > b->total_ns;
    return *a->path < *b->path;
  });
  const std::size_t kept = std::min(order.size(), options_.max_cgroups);
  section.dropped_cgroups = order.size() - kept;
  for (std::size_t i = 0; i < kept; ++i) {
    for (std::size_t k = 0; k < kStallKindCount; ++k) {
      const StallHistogram* h = order[i]->kinds[k];
      if (h == nullptr) continue;
      section.cgroups.push_back(
          CgroupStall{*order[i]->path, static_cast<StallKind>(k), StallDistribution{h->buckets, h->count, h->sum_ns}});
    }
  }
  std::sort(section.oom_victims.begin(), section.oom_victims.end(),
            [](const CgroupOomVictims& a, const CgroupOomVictims& b) { return a.cgroup < b.cgroup; });
  if (section.oom_victims.size() > options_.max_cgroups) section.oom_victims.resize(options_.max_cgroups);

  for (std::uint64_t id : retiring) {
    if (ids.find(id) == nullptr) ++section.unresolved_ids;
    retire(id, reading, ids, forget);
  }
  // A removed cgroup that never stalled has nothing to show: its name goes at once, so cgroup
  // churn does not grow the map.
  std::unordered_set<std::uint64_t> with_data;
  for (const auto& h : reading.histograms) with_data.insert(h.memcg_id);
  for (const auto& v : reading.oom_victims) with_data.insert(v.memcg_id);
  ids.forget_removed_unless([&with_data](std::uint64_t id) { return with_data.count(id) != 0; });
  return section;
}

}  // namespace memdiag
