// SPDX-License-Identifier: Apache-2.0
#include "probes/analysis/cgroup_figures.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

#include "probes/analysis/saturating.hpp"
#include "probes/analysis/snapshot_window.hpp"
#include "probes/core/cgroup_path.hpp"
#include "probes/core/stall_kind.hpp"

namespace memdiag::analysis {

namespace {

// The memory.stat values the figures read, found in one pass over a cgroup's keys (a lookup
// per value was a tenth of a 500-cgroup diagnosis).
struct StatValues {
  std::optional<double> anon, file, shmem, swap, inactive_file, refault_file, pgscan, pgsteal;
};

StatValues stat_values(const CgroupSample& c) {
  StatValues out;
  for (const CgroupStatValue& v : c.stat) {
    std::optional<double>* into = nullptr;
    switch (v.key.size()) {  // the lengths tell most keys apart before any comparison
      case 4:
        if (v.key == "anon") into = &out.anon;
        else if (v.key == "file") into = &out.file;
        else if (v.key == "swap") into = &out.swap;
        break;
      case 5:
        if (v.key == "shmem") into = &out.shmem;
        break;
      case 6:
        if (v.key == "pgscan") into = &out.pgscan;
        break;
      case 7:
        if (v.key == "pgsteal") into = &out.pgsteal;
        break;
      case 13:
        if (v.key == "inactive_file") into = &out.inactive_file;
        break;
      case 23:
        if (v.key == "workingset_refault_file") into = &out.refault_file;
        break;
      default:
        break;
    }
    if (into != nullptr && !*into) *into = static_cast<double>(v.value);
  }
  return out;
}

std::optional<double> psi_seconds(const CgroupSample& c, bool full) {
  if (!c.pressure) return std::nullopt;
  if (full) {
    if (!c.pressure->full) return std::nullopt;
    return static_cast<double>(c.pressure->full->total_us) / 1e6;
  }
  return static_cast<double>(c.pressure->some.total_us) / 1e6;
}

// memory.events high + max (v2), or memory.failcnt (v1): each is the limit being hit.
std::optional<double> limit_events(const CgroupSample& c) {
  const auto& high = c.events[static_cast<std::size_t>(CgroupEvent::kHigh)];
  const auto& max = c.events[static_cast<std::size_t>(CgroupEvent::kMax)];
  if (high || max) return static_cast<double>(high.value_or(0) + max.value_or(0));
  if (c.failcnt) return static_cast<double>(*c.failcnt);
  return std::nullopt;
}

std::optional<double> oom_kills(const CgroupSample& c) {
  const auto& kills = c.events[static_cast<std::size_t>(CgroupEvent::kOomKill)];
  return kills ? std::optional<double>(static_cast<double>(*kills)) : std::nullopt;
}

// eBPF stall seconds of each cgroup's subtree, by cause: direct reclaim, reclaim at a memcg
// limit (memcg + soft limit), compaction. Cumulative, so one snapshot's sums are a counter.
using SubtreeStall = std::array<double, 3>;
std::unordered_map<std::string_view, SubtreeStall> subtree_stalls(const Snapshot& s) {
  std::unordered_map<std::string_view, SubtreeStall> sums;
  if (!s.reclaim_stall) return sums;
  for (const CgroupStall& entry : s.reclaim_stall->cgroups) {
    std::size_t cause = 0;
    switch (entry.kind) {
      case StallKind::kDirect: cause = 0; break;
      case StallKind::kMemcg:
      case StallKind::kSoftLimit: cause = 1; break;
      case StallKind::kCompaction: cause = 2; break;
      default: continue;  // throttling is writeback's wait, not reclaim's
    }
    const double seconds = static_cast<double>(entry.stall.sum_ns) / 1e9;
    for (std::string_view at = entry.cgroup; !at.empty(); at = parent_cgroup(at)) {
      sums[at][cause] += seconds;
    }
  }
  return sums;
}

std::unordered_map<std::string_view, std::uint64_t> subtree_unbacked(const Snapshot& s) {
  std::unordered_map<std::string_view, std::uint64_t> sums;
  if (!s.processes) return sums;
  for (const CgroupProcessTotals& totals : s.processes->cgroups) {
    for (std::string_view at = totals.cgroup; !at.empty(); at = parent_cgroup(at)) {
      sums[at] += totals.unbacked_promise_bytes;
    }
  }
  return sums;
}

// The cgroups of an earlier snapshot, found by path. The source keeps most cgroups at the same
// place from one sample to the next, so that place is tried first, and the hash index (500
// paths hashed and allocated) is built only when a cgroup moved.
class EarlierCgroups {
 public:
  explicit EarlierCgroups(const Snapshot* s) : section_(s && s->cgroups ? &*s->cgroups : nullptr) {}

  const CgroupSample* find(std::string_view path, std::size_t position) {
    if (section_ == nullptr) return nullptr;
    const auto& all = section_->cgroups;
    if (position < all.size() && all[position].path == path) return &all[position];
    if (!indexed_) {
      index_.reserve(all.size());
      for (const CgroupSample& c : all) index_.emplace(c.path, &c);
      indexed_ = true;
    }
    const auto it = index_.find(path);
    return it == index_.end() ? nullptr : it->second;
  }

 private:
  const CgroupSection* section_;
  bool indexed_ = false;
  std::unordered_map<std::string_view, const CgroupSample*> index_;
};

// The rate of `value` between a cgroup's sample at a window's start and now; absent when either
// lacks it, no time passed, or it went down (a counter reset: the cgroup was re-created).
template <class Value>
std::optional<double> cgroup_rate(const CgroupSample* then, const CgroupSample& now, double seconds, Value value) {
  if (!then || seconds <= 0) return std::nullopt;
  const auto a = value(*then), b = value(now);
  if (!a || !b || *b < *a) return std::nullopt;
  return (*b - *a) / seconds;
}

// v2: 1 - pgsteal/pgscan of memory.stat over the window. v1 has neither counter, but the
// kernel's vmpressure computes the same measure per 512 pages scanned and signals its level on
// memory.pressure_level: a listener at a level hears that level and those above, so the counts
// are all events, medium and above, critical. Each level stands for its lower edge (low 0, medium
// 0.60, critical 0.95), so the estimate errs low.
std::optional<double> cgroup_reclaim_inefficiency(const CgroupSample* before, const StatValues& before_stat,
                                                  const CgroupSample& now, const StatValues& now_stat, double seconds,
                                                  const StallThresholds& t) {
  if (before == nullptr || seconds <= 0) return std::nullopt;
  const auto rate = [seconds](std::optional<double> a, std::optional<double> b) -> std::optional<double> {
    if (!a || !b || *b < *a) return std::nullopt;
    return (*b - *a) / seconds;
  };
  if (now_stat.pgscan && now_stat.pgsteal) {
    const auto scanned = rate(before_stat.pgscan, now_stat.pgscan);
    const auto stolen = rate(before_stat.pgsteal, now_stat.pgsteal);
    if (!scanned || !stolen) return std::nullopt;
    return reclaim_inefficiency(scanned, stolen, t.global_scan_min_pages_per_second);
  }
  if (!now.notifications || !now.notifications->has_pressure_levels || !before->notifications ||
      !before->notifications->has_pressure_levels) {
    return std::nullopt;
  }
  const auto& a = before->notifications->pressure;
  const auto& b = now.notifications->pressure;
  if (b[0] < a[0] || b[1] < a[1] || b[2] < a[2]) return std::nullopt;  // re-registered: counts restarted
  constexpr double kVmpressureWindowPages = 512;
  const double events = static_cast<double>(b[0] - a[0]);
  if (events * kVmpressureWindowPages / seconds < t.global_scan_min_pages_per_second || events <= 0) return 0.0;
  const double critical = static_cast<double>(b[2] - a[2]);
  const double medium = std::max(0.0, static_cast<double>(b[1] - a[1]) - critical);
  return std::clamp((0.95 * critical + 0.60 * medium) / events, 0.0, 1.0);
}

}  // namespace

std::optional<double> CgroupFigures::stall_ratio() const {
  if (stall.psi_some_ratio) return stall.psi_some_ratio;
  if (stall.direct_reclaim_stall_ratio && stall.memcg_reclaim_stall_ratio && stall.compaction_stall_ratio) {
    return *stall.direct_reclaim_stall_ratio + *stall.memcg_reclaim_stall_ratio + *stall.compaction_stall_ratio;
  }
  return std::nullopt;
}

std::vector<CgroupFigures> CgroupFigureTracker::compute(const Snapshot& current, const std::vector<SnapshotPtr>& ring,
                                                        const StallThresholds& stall,
                                                        std::chrono::milliseconds growth_half_life) {
  const std::chrono::milliseconds window = stall.window;
  const std::chrono::milliseconds thrashing_window = stall.thrashing_window;
  std::vector<CgroupFigures> out;
  ++samples_;
  if (!current.cgroups) {
    memory_.clear();
    return out;
  }
  const Snapshot* start = window_start(ring, current, window);
  const Snapshot* thrash_start = window_start(ring, current, thrashing_window);
  const double seconds = start ? seconds_between(*start, current) : 0;
  const double thrash_seconds = thrash_start ? seconds_between(*thrash_start, current) : 0;
  EarlierCgroups then(start);
  EarlierCgroups thrash_then(thrash_start);
  const auto stalls_now = subtree_stalls(current);
  const auto stalls_then = start ? subtree_stalls(*start) : decltype(stalls_now){};
  const auto unbacked = subtree_unbacked(current);
  const bool ebpf = current.reclaim_stall && start && start->reclaim_stall;
  const double page_bytes = current.cgroups->page_bytes;

  out.reserve(current.cgroups->cgroups.size());
  for (std::size_t position = 0; position < current.cgroups->cgroups.size(); ++position) {
    const CgroupSample& c = current.cgroups->cgroups[position];
    const StatValues stat = stat_values(c);
    CgroupFigures f;
    f.sample = &c;
    StallFigures& s = f.stall;
    s.window_seconds = seconds;
    f.signals.push_back(stall_signal::kCgroup);
    if (c.pressure) f.signals.push_back(stall_signal::kPsi);
    if (current.reclaim_stall) f.signals.push_back(stall_signal::kEbpf);

    const CgroupSample* before = then.find(c.path, position);
    s.psi_some_ratio = cgroup_rate(before, c, seconds, [](const CgroupSample& x) { return psi_seconds(x, false); });
    s.psi_full_ratio = cgroup_rate(before, c, seconds, [](const CgroupSample& x) { return psi_seconds(x, true); });
    s.limit_events_per_second = cgroup_rate(before, c, seconds, limit_events);
    if (auto kills = cgroup_rate(before, c, seconds, oom_kills)) s.oom_kills = *kills * seconds;
    if (ebpf && before) {
      // A cgroup with no stall yet has no entry: zero, as its counters would be.
      const auto now_it = stalls_now.find(c.path);
      const auto then_it = stalls_then.find(c.path);
      const SubtreeStall now_sum = now_it == stalls_now.end() ? SubtreeStall{} : now_it->second;
      const SubtreeStall then_sum = then_it == stalls_then.end() ? SubtreeStall{} : then_it->second;
      std::array<std::optional<double>*, 3> into = {&s.direct_reclaim_stall_ratio, &s.memcg_reclaim_stall_ratio,
                                                    &s.compaction_stall_ratio};
      for (std::size_t i = 0; i < into.size(); ++i) {
        // A subtree's sum can fall when a stalled child leaves eBPF's top list: no rate then.
        if (seconds > 0 && now_sum[i] >= then_sum[i]) *into[i] = (now_sum[i] - then_sum[i]) / seconds;
      }
    }
    const CgroupSample* thrash_before = thrash_then.find(c.path, position);
    const StatValues thrash_stat = thrash_before ? stat_values(*thrash_before) : StatValues{};
    if (thrash_before && thrash_seconds > 0 && stat.refault_file && thrash_stat.refault_file &&
        *stat.refault_file >= *thrash_stat.refault_file && stat.file && *stat.file > 0) {
      const double refaults = (*stat.refault_file - *thrash_stat.refault_file) / thrash_seconds;
      s.refault_ratio = refaults < stall.refault_min_pages_per_second ? 0 : refaults * thrash_seconds * page_bytes / *stat.file;
    }
    s.reclaim_inefficiency = cgroup_reclaim_inefficiency(thrash_before, thrash_stat, c, stat, thrash_seconds, stall);

    const double anon = stat.anon.value_or(0);
    const double shmem = stat.shmem.value_or(0);
    double swap = 0;
    if (c.swap_usage_bytes) {
      swap = static_cast<double>(*c.swap_usage_bytes);
    } else if (stat.swap) {
      swap = *stat.swap;
    }
    // RAM and swap apart: a job swapped out holds no RAM a RAM shortfall could get back.
    f.footprint_bytes = saturating_bytes(anon + shmem);
    f.swap_bytes = saturating_bytes(swap);
    f.relief_bytes = saturating_bytes(anon);

    std::optional<std::uint64_t> size = c.limited ? c.limit_bytes : std::nullopt;
    if (c.high_bytes && (!size || *c.high_bytes < *size)) size = c.high_bytes;
    if (size && c.usage_bytes) {
      f.size_bytes = size;
      const std::uint64_t inactive = saturating_bytes(stat.inactive_file.value_or(0));
      const std::uint64_t working_set = *c.usage_bytes > inactive ? *c.usage_bytes - inactive : 0;
      f.available_bytes = *size > working_set ? *size - working_set : 0;
      const std::uint64_t file = saturating_bytes(stat.file.value_or(0));
      const std::uint64_t beyond_cache = *c.usage_bytes > file ? *c.usage_bytes - file : 0;
      f.available_beyond_cache_bytes = *size > beyond_cache ? *size - beyond_cache : 0;
    }
    if (const auto it = unbacked.find(c.path); it != unbacked.end()) f.unbacked_promise_bytes = it->second;

    Memory& m = memory_[c.path];
    f.growth_bytes_per_second = m.ema.update(current.taken_at, f.footprint_bytes, growth_half_life);
    const auto persist = [&](StallPersistence& p, std::optional<double> total, double present) {
      return p.update(current.taken_at, total, present, stall.sustain, stall.long_window);
    };
    s.psi_some_persistence = persist(m.psi_some, psi_seconds(c, false), stall.psi_some[0]);
    s.psi_full_persistence = persist(m.psi_full, psi_seconds(c, true), stall.psi_full[0]);
    std::optional<double> ebpf_total;
    if (current.reclaim_stall) {
      const auto it = stalls_now.find(c.path);
      ebpf_total = it == stalls_now.end() ? 0.0 : it->second[0] + it->second[1] + it->second[2];
    }
    s.ebpf_persistence = persist(m.ebpf, ebpf_total, stall.stall_seconds_per_second[0]);
    m.seen = samples_;
    out.push_back(std::move(f));
  }
  std::erase_if(memory_, [&](const auto& entry) { return entry.second.seen != samples_; });
  return out;
}

}  // namespace memdiag::analysis
