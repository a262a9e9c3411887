// SPDX-License-Identifier: Apache-2.0
#include "probes/analysis/stall_model.hpp"

#include <algorithm>
#include <string_view>

#include "probes/analysis/snapshot_window.hpp"
#include "probes/core/stall_kind.hpp"

namespace memdiag::analysis {

namespace {

std::optional<double> psi_total_seconds(const Snapshot& s, bool full) {
  if (!s.pressure) return std::nullopt;
  const auto& memory = s.pressure->resources[static_cast<std::size_t>(PsiResourceKind::kMemory)];
  if (!memory) return std::nullopt;
  if (full) {
    if (!memory->full) return std::nullopt;
    return static_cast<double>(memory->full->total_us) / 1e6;
  }
  return static_cast<double>(memory->some.total_us) / 1e6;
}

std::optional<double> ebpf_stall_seconds(const Snapshot& s, std::initializer_list<StallKind> kinds) {
  if (!s.reclaim_stall) return std::nullopt;
  double sum = 0;
  for (StallKind kind : kinds) sum += static_cast<double>(s.reclaim_stall->node[static_cast<std::size_t>(kind)].sum_ns) / 1e9;
  return sum;
}

std::optional<double> meminfo(const Snapshot& s, std::string_view name) {
  if (!s.meminfo) return std::nullopt;
  const auto v = s.meminfo->get(name);
  return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
}

std::optional<double> paging(const Snapshot& s, std::optional<std::uint64_t> WindowsPagingSection::*counter) {
  if (!s.windows_paging || !(*s.windows_paging.*counter)) return std::nullopt;
  return static_cast<double>(*(*s.windows_paging.*counter));
}

void add(StallVerdict& v, std::string_view code, double value, const LevelThresholds& bounds,
         VerdictLevel at_most = VerdictLevel::kCritical) {
  VerdictLevel level = std::min(level_reached(value, bounds), at_most);
  if (level == VerdictLevel::kNone) return;
  v.reasons.push_back(VerdictReason{code, value, bounds[static_cast<std::size_t>(level) - 1], level});
}

void add_fixed(StallVerdict& v, std::string_view code, double value, double threshold, VerdictLevel level) {
  v.reasons.push_back(VerdictReason{code, value, threshold, level});
}

}  // namespace

std::optional<bool> waiting_noticeably(const StallFigures& f, const StallThresholds& t) {
  if (f.psi_some_ratio) return *f.psi_some_ratio >= t.psi_some[0];
  if (f.direct_reclaim_stall_ratio && f.memcg_reclaim_stall_ratio && f.compaction_stall_ratio) {
    return *f.direct_reclaim_stall_ratio + *f.memcg_reclaim_stall_ratio + *f.compaction_stall_ratio >=
           t.stall_seconds_per_second[0];
  }
  if (f.pages_input_per_second) return *f.pages_input_per_second >= t.pages_input_per_second[0];
  return std::nullopt;
}

namespace {

// A stall measure judged by the time it took (stall_persistence.hpp): the window's share is at
// most kBriefStallLevelCap; the sustained share and the long window's are worth their level.
// The figure given is the one that set the level (sustained, then long, then the window's).
struct TimeLost {
  VerdictLevel level = VerdictLevel::kNone;
  double value = 0;
};

TimeLost time_lost(std::optional<double> window, const StallPersistenceFigures& p, const LevelThresholds& bounds) {
  TimeLost best;
  const auto consider = [&](std::optional<double> share, VerdictLevel cap) {
    if (!share) return;
    const VerdictLevel level = std::min(level_reached(*share, bounds), cap);
    if (level > best.level) best = {level, *share};
  };
  consider(p.sustained_ratio, VerdictLevel::kCritical);
  consider(p.long_ratio, VerdictLevel::kCritical);
  consider(window, kBriefStallLevelCap);
  return best;
}

void add_time_lost(StallVerdict& v, const TimeLost& lost, const LevelThresholds& bounds) {
  if (lost.level == VerdictLevel::kNone) return;
  v.reasons.push_back(
      VerdictReason{stall_reason::kStallTime, lost.value, bounds[static_cast<std::size_t>(lost.level) - 1], lost.level});
}

bool is_stall_reason(std::string_view code) {
  return code == stall_reason::kStallTime || code == stall_reason::kDirectReclaim ||
         code == stall_reason::kMemcgLimit || code == stall_reason::kThrashing || code == stall_reason::kOomKill ||
         code == stall_reason::kSwapExhausted;
}

void settle_level(StallVerdict& v) {
  std::stable_sort(v.reasons.begin(), v.reasons.end(),
                   [](const VerdictReason& a, const VerdictReason& b) { return a.level > b.level; });
  v.instant_level = VerdictLevel::kNone;
  for (const VerdictReason& r : v.reasons) v.instant_level = std::max(v.instant_level, r.level);
  v.level = v.instant_level;
}

}  // namespace

std::optional<double> reclaim_inefficiency(std::optional<double> scanned_per_second,
                                           std::optional<double> stolen_per_second, double min_scanned_per_second) {
  if (!scanned_per_second || !stolen_per_second) return std::nullopt;
  if (*scanned_per_second < min_scanned_per_second || *scanned_per_second <= 0) return 0.0;
  return std::clamp(1.0 - *stolen_per_second / *scanned_per_second, 0.0, 1.0);
}

void judge_stall(StallVerdict& v, const StallThresholds& t) {
  const StallFigures& f = v.figures;
  v.reasons.clear();
  const bool has_psi = f.psi_some_ratio || f.psi_full_ratio;
  const bool has_ebpf = f.direct_reclaim_stall_ratio && f.memcg_reclaim_stall_ratio && f.compaction_stall_ratio;
  // Stall time sets the level, by the time it took: PSI where there is PSI, eBPF stall time
  // where not.
  std::optional<VerdictLevel> stall_level;
  if (has_psi) {
    const TimeLost some = time_lost(f.psi_some_ratio, f.psi_some_persistence, t.psi_some);
    const TimeLost full = time_lost(f.psi_full_ratio, f.psi_full_persistence, t.psi_full);
    // At the same level, full is the graver figure (every task waited), so it is the one given.
    if (full.level != VerdictLevel::kNone && full.level >= some.level) {
      add_time_lost(v, full, t.psi_full);
    } else {
      add_time_lost(v, some, t.psi_some);
    }
    stall_level = std::max(some.level, full.level);
  } else if (has_ebpf) {
    const double window = *f.direct_reclaim_stall_ratio + *f.memcg_reclaim_stall_ratio + *f.compaction_stall_ratio;
    const TimeLost lost = time_lost(window, f.ebpf_persistence, t.stall_seconds_per_second);
    add_time_lost(v, lost, t.stall_seconds_per_second);
    stall_level = lost.level;
  }
  // Causes say why; with a stall measure they never raise the level above its own.
  const VerdictLevel cause_cap = stall_level.value_or(VerdictLevel::kCritical);
  if (f.direct_reclaim_stall_ratio) {
    add(v, stall_reason::kDirectReclaim, *f.direct_reclaim_stall_ratio, t.stall_seconds_per_second, cause_cap);
  } else if (f.allocstalls_per_second && *f.allocstalls_per_second > 0) {
    add_fixed(v, stall_reason::kDirectReclaim, *f.allocstalls_per_second, 0, VerdictLevel::kLow);
  }
  if (f.memcg_reclaim_stall_ratio) {
    add(v, stall_reason::kMemcgLimit, *f.memcg_reclaim_stall_ratio, t.stall_seconds_per_second, cause_cap);
  } else if (f.limit_events_per_second && *f.limit_events_per_second > 0) {
    add_fixed(v, stall_reason::kMemcgLimit, *f.limit_events_per_second, 0, VerdictLevel::kLow);
  }
  if (f.compaction_stall_ratio) {
    add(v, stall_reason::kCompaction, *f.compaction_stall_ratio, t.stall_seconds_per_second, cause_cap);
  } else if (f.compact_stalls_per_second && *f.compact_stalls_per_second > 0) {
    add_fixed(v, stall_reason::kCompaction, *f.compact_stalls_per_second, 0, VerdictLevel::kLow);
  }
  // Refaults are thrashing only while tasks wait for memory a noticeable share of the time (PSI
  // some, or eBPF stall time, at its low threshold), as lmkd weighs refaults only when its PSI
  // trigger (some 70 ms in 1 s) fires: a job streaming a file larger than its memory refaults
  // every page it reads again and waits ~1 % of the time (a real recording on this machine,
  // tests/fixtures/recordings/page-cache-streaming). Without PSI the wait on refaults is not
  // measured at all (eBPF times reclaim, not the reads that follow it): reclaim under way (eBPF
  // time, the limit being hit, allocation stalls) is then enough, refaults may reach high, and
  // the level is a lower bound. With no stall measure at all, refaults are the best there is.
  if (f.refault_ratio) {
    bool waiting = true;
    if (has_psi) {
      waiting = waiting_noticeably(f, t).value_or(true);
    } else if (has_ebpf) {
      waiting = waiting_noticeably(f, t).value_or(true) ||
                (f.limit_events_per_second && *f.limit_events_per_second > 0) ||
                (f.allocstalls_per_second && *f.allocstalls_per_second > 0);
    }
    if (waiting) {
      add(v, stall_reason::kThrashing, *f.refault_ratio, t.refault_ratio,
          has_psi ? VerdictLevel::kMedium : VerdictLevel::kHigh);
    }
  }
  // Reclaim freeing little of what it scans: with PSI a cause like thrashing (gated the same
  // way: kswapd churning while nobody waits is no stall); without PSI one of the signals that
  // still reach high.
  if (f.reclaim_inefficiency) {
    const bool waiting = !has_psi || waiting_noticeably(f, t).value_or(true);
    if (waiting) {
      add(v, stall_reason::kReclaimInefficient, *f.reclaim_inefficiency, t.reclaim_inefficiency,
          has_psi ? VerdictLevel::kMedium : VerdictLevel::kHigh);
    }
  }
  if (f.oom_kills && *f.oom_kills > 0) add_fixed(v, stall_reason::kOomKill, *f.oom_kills, 1, VerdictLevel::kHigh);
  // Windows: hard faults set the level (there is no stall time); the low-memory notification
  // says the memory manager is trimming working sets.
  if (f.pages_input_per_second) add(v, stall_reason::kHardFaults, *f.pages_input_per_second, t.pages_input_per_second);
  if (f.low_memory && *f.low_memory > 0) add_fixed(v, stall_reason::kLowMemory, *f.low_memory, 1, VerdictLevel::kMedium);
  if (f.fault_latency_ratio) {
    add(v, stall_reason::kSlowFaults, *f.fault_latency_ratio, t.fault_latency_ratio,
        has_psi ? VerdictLevel::kMedium : VerdictLevel::kHigh);
  }
  // Without PSI, the time tasks wait for refaults and swap-ins is not measured: what the level
  // says is at least that bad.
  v.missing_signals.clear();
  if (!has_psi && !f.pages_input_per_second) v.missing_signals.push_back(stall_signal::kPsi);
  if (!has_psi && !has_ebpf && !f.pages_input_per_second) v.missing_signals.push_back(stall_signal::kEbpf);
  v.lower_bound = !v.missing_signals.empty();

  settle_level(v);
  // Swap all but gone matters only while memory is short: then it is what is left to give.
  if (v.instant_level >= VerdictLevel::kLow && f.swap_free_ratio && *f.swap_free_ratio < t.swap_exhausted_free_ratio) {
    add_fixed(v, stall_reason::kSwapExhausted, *f.swap_free_ratio, t.swap_exhausted_free_ratio, VerdictLevel::kMedium);
    settle_level(v);
  }
}

void own_stall(StallVerdict& v, bool short_of_memory, std::size_t inner_stalling) {
  if (short_of_memory) return;
  // Reclaim at a limit and an OOM kill without a shortage here are a limit's below, by
  // definition: never this scope's, whether or not that cgroup is still there to say so.
  std::erase_if(v.reasons, [&](const VerdictReason& r) {
    return r.code == stall_reason::kMemcgLimit || r.code == stall_reason::kOomKill ||
           (inner_stalling > 0 && is_stall_reason(r.code));
  });
  // What is left (compaction on a node with memory to spare, a slow canary, a wait nobody at
  // a limit explains) is worth a note, not an alarm.
  for (VerdictReason& r : v.reasons) r.level = std::min(r.level, VerdictLevel::kLow);
  settle_level(v);
}

std::optional<bool> StallModel::reclaiming_globally(const StallFigures& f) const {
  if (!f.global_scan_pages_per_second && !f.allocstalls_per_second) return std::nullopt;
  return f.global_scan_pages_per_second.value_or(0) >= thresholds_.global_scan_min_pages_per_second ||
         f.allocstalls_per_second.value_or(0) > 0;
}

StallVerdict StallModel::assess_instant(const Snapshot& current, const std::vector<SnapshotPtr>& ring) {
  const StallThresholds& t = thresholds_;
  VmstatIndex& vmstat = vmstat_;
  StallVerdict v;
  StallFigures& f = v.figures;
  if (current.pressure) v.signals.push_back(stall_signal::kPsi);
  if (current.vmstat) v.signals.push_back(stall_signal::kVmstat);
  if (current.reclaim_stall) v.signals.push_back(stall_signal::kEbpf);
  if (current.meminfo) v.signals.push_back(stall_signal::kMeminfo);
  if (current.windows_paging) v.signals.push_back(stall_signal::kPaging);
  if (current.windows_memory && current.windows_memory->low_memory) v.signals.push_back(stall_signal::kLowMemory);

  if (const Snapshot* start = window_start(ring, current, t.window)) {
    const Snapshot& s = *start;
    f.window_seconds = seconds_between(s, current);
    f.psi_some_ratio = rate(s, current, [](const Snapshot& x) { return psi_total_seconds(x, false); });
    f.psi_full_ratio = rate(s, current, [](const Snapshot& x) { return psi_total_seconds(x, true); });
    f.direct_reclaim_stall_ratio =
        rate(s, current, [](const Snapshot& x) { return ebpf_stall_seconds(x, {StallKind::kDirect}); });
    f.memcg_reclaim_stall_ratio = rate(
        s, current, [](const Snapshot& x) { return ebpf_stall_seconds(x, {StallKind::kMemcg, StallKind::kSoftLimit}); });
    f.compaction_stall_ratio =
        rate(s, current, [](const Snapshot& x) { return ebpf_stall_seconds(x, {StallKind::kCompaction}); });
    f.allocstalls_per_second = rate(s, current, [&](const Snapshot& x) { return vmstat.allocstalls(x); });
    f.direct_scan_pages_per_second =
        rate(s, current, [&](const Snapshot& x) { return vmstat.get(x, VmstatIndex::kPgscanDirect); });
    f.compact_stalls_per_second =
        rate(s, current, [&](const Snapshot& x) { return vmstat.get(x, VmstatIndex::kCompactStall); });
    if (auto kills = rate(s, current, [&](const Snapshot& x) { return vmstat.get(x, VmstatIndex::kOomKill); })) {
      f.oom_kills = *kills * f.window_seconds;
    }
    f.hard_faults_per_second = rate(s, current, [](const Snapshot& x) { return paging(x, &WindowsPagingSection::hard_faults_total); });
    f.pages_input_per_second = rate(s, current, [](const Snapshot& x) { return paging(x, &WindowsPagingSection::pages_input_total); });
    if (current.windows_memory && current.windows_memory->low_memory && s.windows_memory) {
      const bool now = *current.windows_memory->low_memory;
      const bool turned = current.windows_memory->low_memory_signals_total > s.windows_memory->low_memory_signals_total;
      f.low_memory = now || turned ? 1 : 0;
    }
  }
  // How long each stall measure has lasted (severity by time lost).
  const auto persist = [&](StallPersistence& p, std::optional<double> total, double present) {
    return p.update(current.taken_at, total, present, t.sustain, t.long_window);
  };
  f.psi_some_persistence = persist(psi_some_, psi_total_seconds(current, false), t.psi_some[0]);
  f.psi_full_persistence = persist(psi_full_, psi_total_seconds(current, true), t.psi_full[0]);
  f.ebpf_persistence =
      persist(ebpf_,
              ebpf_stall_seconds(current, {StallKind::kDirect, StallKind::kMemcg, StallKind::kSoftLimit,
                                           StallKind::kCompaction}),
              t.stall_seconds_per_second[0]);
  if (const Snapshot* start = window_start(ring, current, t.thrashing_window)) {
    const double seconds = seconds_between(*start, current);
    // Global reclaim: the kernel counts pgscan_kswapd and pgscan_direct only for reclaim that
    // is not at a cgroup's limit, so they say whether the node itself is short.
    f.global_scan_pages_per_second = rate(*start, current, [&](const Snapshot& x) -> std::optional<double> {
      const auto kswapd = vmstat.get(x, VmstatIndex::kPgscanKswapd);
      const auto direct = vmstat.get(x, VmstatIndex::kPgscanDirect);
      if (!kswapd && !direct) return std::nullopt;
      return kswapd.value_or(0) + direct.value_or(0);
    });
    const auto scanned = rate(*start, current, [&](const Snapshot& x) -> std::optional<double> {
      const auto kswapd = vmstat.get(x, VmstatIndex::kPgscanKswapd);
      const auto direct = vmstat.get(x, VmstatIndex::kPgscanDirect);
      if (!kswapd || !direct) return std::nullopt;
      return *kswapd + *direct;
    });
    const auto stolen = rate(*start, current, [&](const Snapshot& x) -> std::optional<double> {
      const auto kswapd = vmstat.get(x, VmstatIndex::kPgstealKswapd);
      const auto direct = vmstat.get(x, VmstatIndex::kPgstealDirect);
      if (!kswapd || !direct) return std::nullopt;
      return *kswapd + *direct;
    });
    f.reclaim_inefficiency = reclaim_inefficiency(scanned, stolen, t.global_scan_min_pages_per_second);
    const auto refaults_per_second = rate(*start, current, [&](const Snapshot& x) {
      // workingset_refault_file since 5.9; workingset_refault before (file pages only then).
      auto file = vmstat.get(x, VmstatIndex::kWorkingsetRefaultFile);
      return file ? file : vmstat.get(x, VmstatIndex::kWorkingsetRefault);
    });
    // The file cache in pages, as vmstat counts refaults: no page size needed.
    const auto active = vmstat.get(current, VmstatIndex::kActiveFile);
    const auto inactive = vmstat.get(current, VmstatIndex::kInactiveFile);
    if (refaults_per_second && active && inactive && *active + *inactive > 0) {
      f.refault_ratio = *refaults_per_second < t.refault_min_pages_per_second
                            ? 0
                            : *refaults_per_second * seconds / (*active + *inactive);
    }
  }
  if (current.meminfo) {
    const auto total = meminfo(current, "SwapTotal");
    const auto free = meminfo(current, "SwapFree");
    if (total && free && *total > 0) f.swap_free_ratio = *free / *total;
  } else if (current.windows_memory && current.system_memory && current.system_memory->swap_total_bytes > 0) {
    // The page files (windows/figures: their free part is bounded by the commit headroom).
    f.swap_free_ratio = static_cast<double>(current.system_memory->swap_free_bytes) /
                        static_cast<double>(current.system_memory->swap_total_bytes);
  }
  if (current.canary) {
    v.signals.push_back(stall_signal::kCanary);
    // Calm: tasks waited less than the low threshold in this window (by PSI, else eBPF); with
    // neither, every cycle counts.
    const bool calm = !waiting_noticeably(f, t).value_or(false);
    f.fault_latency_ratio = faults_.update(current.canary->node, current.taken_at, calm);
  }

  judge_stall(v, t);
  return v;
}

}  // namespace memdiag::analysis
