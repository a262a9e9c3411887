// SPDX-License-Identifier: Apache-2.0
// The stall model: is the node stalling on memory right now, how badly, and why.
//
// The level comes from how much time tasks spent waiting for memory over the last `window`
// (2 s): PSI some and full, differenced from their `total` counters over the snapshot ring (1 s
// resolution; avg10 lags ~10 s), or, without PSI, the eBPF stall time. The causes say why:
// direct reclaim, reclaim at cgroup limits and compaction (eBPF time where there is eBPF, the
// vmstat counters where not), thrashing (file refaults over the longer `thrashing_window`
// against the file cache, as Android's lmkd measures it), an OOM kill in the window, swap all
// but gone. Each reason carries its number and the threshold it reached.
//
// Severity follows the time lost (stall_persistence.hpp): the window's share alone makes at
// most low (a burst: a cgroup writing back its dirty cache at its limit makes them all day); a stall present through the last `sustain` (at least three sample
// intervals) reaches the level of its share, and so does the share of the longer `long_window`
// (recurring bursts). A sustained stall reaches its level within ~3 s at the default sampling.
// Stall time sets the level; the causes (direct reclaim, memcg limit, compaction) say why and
// never raise it above the stall time's level while there is a stall measure.
//
// A stall belongs to the scope that is short of memory (own_stall): a scope whose memory is
// not short (a cgroup: no shortfall and its own limit not hit; the node: no shortfall, no
// kswapd or direct reclaim, which the kernel counts only for reclaim that is not at a cgroup's
// limit) does not own the stall its PSI shows: its limited descendants that stall do ("N cgroups
// at their limits"), and with none of them, the stall is said at low at most.
//
// Falling has hysteresis: the level is the highest instant level of the last `hold` (10 s), so
// a stall that pauses for a second does not flap the level, and after the pressure ends the
// level is none within window + hold (12 s).
//
// Defaults, and why (docs/diagnosis.md): PSI some 5/10/30/60 % (psi-notify warns at some
// avg10 10 %), full 5/10/20/60 % (low and medium as some's: one busy task makes full equal
// some; lmkd: full 700 ms in 1 s is critical; systemd-oomd kills at full avg10 60 % held 30 s,
// which must be critical here well before); eBPF stall seconds per second
// on the same scale as PSI some (the same quantity where several tasks stall at once, larger);
// reclaim that frees under 40 / 20 / 5 % of what it scans (the kernel's vmpressure: 60 % of the
// scan unreclaimed is its medium, 95 % its critical), at most medium with PSI;
// refaults over the file cache 10/30/100 % (lmkd's thrashing limit is 100 %, 30 % on small
// devices), at most medium on their own, and only from 256 refaults a second (1 MiB/s of 4 KiB
// pages: a new cgroup reading back a few pages of its libraries over a file cache of a few
// pages is not thrashing) while tasks wait; an OOM kill is high; the canary's page faults 3x /
// 10x slower than its calm baseline on this host are low / medium (slow_faults).
//
// Windows has no stall time. Its level comes from hard faults: pages read back from disk per
// second (PDH \Memory\Pages Input/sec), 256 / 1024 / 4096 / 16384 (1, 4, 16, 64 MiB/s of 4 KiB
// pages: the refault floor above is the low threshold, a program waiting for 64 MiB/s of its own
// pages is stalled whatever the disk); and the low-memory resource notification, the memory
// manager's own signal that it is trimming working sets, is medium (low_memory). Swap is the page
// file there (SystemMemory).
#pragma once

#include <chrono>
#include <utility>
#include <vector>

#include "probes/analysis/fault_baseline.hpp"
#include "probes/analysis/level_hold.hpp"
#include "probes/analysis/stall_persistence.hpp"
#include "probes/analysis/vmstat_index.hpp"
#include "probes/core/snapshot_store.hpp"
#include "probes/core/stall_verdict.hpp"

namespace memdiag::analysis {

struct StallThresholds {
  std::chrono::milliseconds window{2000};
  std::chrono::milliseconds thrashing_window{10000};
  std::chrono::milliseconds hold{10000};
  // Severity by time lost (stall_persistence.hpp): a stall present through `sustain` (at least
  // three sample intervals) is sustained; `long_window` gives recurring bursts their share.
  std::chrono::milliseconds sustain{2000};
  std::chrono::milliseconds long_window{10000};
  LevelThresholds psi_some{0.05, 0.10, 0.30, 0.60};
  LevelThresholds psi_full{0.05, 0.10, 0.20, 0.60};
  LevelThresholds stall_seconds_per_second{0.05, 0.10, 0.30, 0.60};  // eBPF, per kind and in all
  LevelThresholds refault_ratio{0.10, 0.30, 1.00, 1e300};
  // 1 - pgsteal/pgscan over the thrashing window (reason reclaim_inefficient; at most medium
  // with PSI, where time lost is measured; high without). The kernel's vmpressure calls 0.60
  // medium and 0.95 critical; 0.80 is between.
  LevelThresholds reclaim_inefficiency{0.60, 0.80, 0.95, 1e300};
  // Below this many file refaults a second the refault ratio is 0: a trickle is not thrashing,
  // however small the file cache it is measured against.
  double refault_min_pages_per_second = 256;
  // The canary's page faults over its calm baseline (reason slow_faults, at most medium: one
  // process's view). 3x: beyond what a busy but calm host varies by; 10x: faults wait for
  // reclaim or compaction.
  LevelThresholds fault_latency_ratio{3, 10, 1e300, 1e300};
  double swap_exhausted_free_ratio = 0.05;
  // Windows: pages read in to resolve hard faults, per second (reason hard_faults).
  LevelThresholds pages_input_per_second{256, 1024, 4096, 16384};
  // The node is reclaiming globally from this many pages scanned a second (kswapd + direct,
  // over the thrashing window): 1 MiB/s of 4 KiB pages, the refault floor's reasoning.
  double global_scan_min_pages_per_second = 256;
  bool operator==(const StallThresholds&) const = default;
};

// The most a stall measure makes of a verdict from its window's share alone, without having
// lasted (a burst): worth saying, not paging for.
inline constexpr VerdictLevel kBriefStallLevelCap = VerdictLevel::kLow;

// The reasons and the instant level (level too) of a verdict whose figures are filled: the
// judgement shared by the node and every cgroup scope. Stall time (PSI, or eBPF without PSI)
// sets the level by time lost; the causes say why. Without PSI (missing_signals has "psi"), the
// refaults, reclaim's inefficiency and the canary's slowdown can reach high on their own and
// the level is a lower bound.
void judge_stall(StallVerdict& v, const StallThresholds& thresholds);

// 1 - stolen/scanned (pages a second, over the same window), 0 below the scan floor (a trickle
// of reclaim says nothing), nullopt without either counter.
std::optional<double> reclaim_inefficiency(std::optional<double> scanned_per_second,
                                           std::optional<double> stolen_per_second, double min_scanned_per_second);

// Keeps of a judged verdict the stall that is the scope's own (see above): unchanged when the
// scope is short of memory; otherwise memcg_limit and oom_kill go (a limit below caused them),
// the other stall reasons go to `inner_stalling` limited descendants stalling at their own
// limits, and what is left stays at low at most.
void own_stall(StallVerdict& v, bool short_of_memory, std::size_t inner_stalling);

// Whether tasks waited for memory a noticeable share of the window: PSI some at its low
// threshold, or without PSI the eBPF stall time at its own; nullopt with neither measure. Gates
// thrashing (refaults while nobody waits are a cache turning over) and says when a canary cycle
// ran calm enough to join its baseline.
std::optional<bool> waiting_noticeably(const StallFigures& f, const StallThresholds& t);

class StallModel {
 public:
  explicit StallModel(StallThresholds thresholds = {}) : thresholds_(std::move(thresholds)) {}

  // This sample's evidence alone for `current` given the snapshots before it (`ring`, oldest
  // first, `current` not in it): the figures, the reasons and the instant level (level too).
  // Call once per sample, in order: persistence and the canary's baseline remember.
  StallVerdict assess_instant(const Snapshot& current, const std::vector<SnapshotPtr>& ring);

  // Whether the node reclaims globally (kswapd or direct reclaim at the floor, or an
  // allocation stalled in reclaim); nullopt without vmstat (a node that cannot tell).
  std::optional<bool> reclaiming_globally(const StallFigures& f) const;

  const StallThresholds& thresholds() const { return thresholds_; }

 private:
  StallThresholds thresholds_;
  VmstatIndex vmstat_;
  FaultBaseline faults_;
  StallPersistence psi_some_, psi_full_, ebpf_;
};

}  // namespace memdiag::analysis
