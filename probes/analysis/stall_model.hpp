// The stall model (issue 14): is the node stalling on memory right now, how badly, and why.
//
// The level comes from how much time tasks spent waiting for memory over the last `window`
// (2 s): PSI some and full, differenced from their `total` counters over the snapshot ring (1 s
// resolution; avg10 lags ~10 s), or, without PSI, the eBPF stall time. The causes say why:
// direct reclaim, reclaim at cgroup limits and compaction (eBPF time where there is eBPF, the
// vmstat counters where not), thrashing (file refaults over the longer `thrashing_window`
// against the file cache, as Android's lmkd measures it), an OOM kill in the window, swap all
// but gone. Each reason carries its number and the threshold it reached.
//
// Rising is immediate: one sample whose window shows the stall raises the level. Falling has
// hysteresis: the level is the highest instant level of the last `hold` (10 s), so a stall that
// pauses for a second does not flap the level, and after the pressure ends the level is none
// within window + hold (12 s).
//
// Defaults, and why (README "Stall verdict"): PSI some 5/10/30/60 % (psi-notify warns at some
// avg10 10 %), full 1/5/20/60 % (lmkd: full 700 ms in 1 s is critical; systemd-oomd kills at full
// avg10 60 % held 30 s, which must be critical here well before); eBPF stall seconds per second
// on the same scale as PSI some (the same quantity where several tasks stall at once, larger);
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
#include "probes/analysis/vmstat_index.hpp"
#include "probes/core/snapshot_store.hpp"
#include "probes/core/stall_verdict.hpp"

namespace memdiag::analysis {

struct StallThresholds {
  std::chrono::milliseconds window{2000};
  std::chrono::milliseconds thrashing_window{10000};
  std::chrono::milliseconds hold{10000};
  LevelThresholds psi_some{0.05, 0.10, 0.30, 0.60};
  LevelThresholds psi_full{0.01, 0.05, 0.20, 0.60};
  LevelThresholds stall_seconds_per_second{0.05, 0.10, 0.30, 0.60};  // eBPF, per kind and in all
  LevelThresholds refault_ratio{0.10, 0.30, 1.00, 1e300};
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
  bool operator==(const StallThresholds&) const = default;
};

// The reasons and the instant level (level too) of a verdict whose figures are filled: the
// judgement shared by the node and every cgroup scope (probes/analysis/cgroup_scopes.hpp).
// Stall time (PSI, or eBPF without PSI) sets the level; the causes say why.
void judge_stall(StallVerdict& v, const StallThresholds& thresholds);

// Whether tasks waited for memory a noticeable share of the window: PSI some at its low
// threshold, or without PSI the eBPF stall time at its own; nullopt with neither measure. Gates
// thrashing (refaults while nobody waits are a cache turning over) and says when a canary cycle
// ran calm enough to join its baseline.
std::optional<bool> waiting_noticeably(const StallFigures& f, const StallThresholds& t);

class StallModel {
 public:
  explicit StallModel(StallThresholds thresholds = {}) : thresholds_(std::move(thresholds)) {}

  // The verdict for `current` given the snapshots before it (`ring`, oldest first, `current`
  // not in it). Call once per sample, in order: the hysteresis remembers the instant levels.
  StallVerdict assess(const Snapshot& current, const std::vector<SnapshotPtr>& ring);

  const StallThresholds& thresholds() const { return thresholds_; }

 private:
  // This sample's evidence alone: the figures, the reasons and the instant level.
  StallVerdict assess_instant(const Snapshot& current, const std::vector<SnapshotPtr>& ring);

  StallThresholds thresholds_;
  VmstatIndex vmstat_;
  LevelHold hold_;
  FaultBaseline faults_;
};

}  // namespace memdiag::analysis
