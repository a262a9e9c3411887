// SPDX-License-Identifier: Apache-2.0
// The process source: a ProcessCensus (process_census.hpp) run on a thread of its
// own, paced, and never waited for long.
//
// Why a thread: reading /proc/PID/maps takes that process's mmap_lock, so a process whose lock
// is held by a writer stuck in reclaim blocks the reader for as long, on a drowning node,
// exactly when the daemon matters. On the sampler thread that would hold up every source. So
// the sampler asks the worker for a scan and waits for it a short while (ScanWaits::later;
// the first scan longer, there being nothing else to serve yet); a scan that takes longer is
// collected by a later sample, and meanwhile the samples serve the last complete scan and say
// how long the one in flight has been running (memdiag_process_scan_in_flight_seconds).
//
// Pacing: a scan costs what the kernel charges for the processes' files, ~1 ms of CPU with the
// eBPF iterator but ~0.4 s with /proc on a node with 2,000 processes of 200 mappings. After a
// scan that cost C of the worker's CPU time, the next one starts no sooner than 100 x C after it
// was collected (1% of a CPU at most; at most kMaxPause), and the samples in between carry the
// last scan's section (`scanned_at` says when it was taken). Except after the first scan: it
// pays once for what later scans reuse (the eBPF scanner's first walk of the cgroup tree and
// its inotify watches: 47 ms on a host whose memory root had seen thousands of cgroups come and
// go, against 0.2 ms for the scans after it), so pacing by it would leave the process section
// seconds old just after start.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "probes/linux/process/process_census.hpp"

namespace memdiag {

struct ScanWaits {
  // How long sample() waits for the scan it started before serving the last one.
  // Nothing to serve yet (and `--once` wants a scan); below the daemon's stop grace (3 s), so a
  // SIGTERM while a first scan is blocked is not taken for a stuck sampler.
  std::chrono::milliseconds first{2000};
  std::chrono::milliseconds later{250};
  // A scan running this long is stuck, not slow (a /proc scan of a crowded node takes ~0.4 s):
  // degraded() says so. Not sooner, or every slow scan would flap the log.
  std::chrono::milliseconds stuck{10000};
};

class ProcessSource final : public Source {
 public:
  // After a scan that cost C of CPU, none before C x this (1% of a CPU at most) ...
  static constexpr int kScanCostFactor = 100;
  // ... nor more than this apart.
  static constexpr std::chrono::minutes kMaxPause{5};
  static constexpr std::uint64_t kDefaultMaxMapCount = ProcessCensus::kDefaultMaxMapCount;

  // open_bpf: empty when built without eBPF. self_pid: the process always reported.
  ProcessSource(const KernelPaths& paths, const ProcessOptions& options, BpfScannerOpener open_bpf, int self_pid,
                ScanWaits waits = {});
  // Stops the worker; one blocked in the kernel is left to finish on its own (detached: the
  // state it uses is shared with it), so a reload or shutdown never waits on a stuck read.
  ~ProcessSource() override;
  ProcessSource(const ProcessSource&) = delete;
  ProcessSource& operator=(const ProcessSource&) = delete;

  std::string_view name() const override { return "processes"; }
  Status probe() override;
  Status sample(Snapshot& out) override;
  std::string degraded() const override;

 private:
  struct Worker;  // the census and what the worker thread shares with the sampler

  std::shared_ptr<Worker> worker_;
  std::thread thread_;  // started at the first scan
  ScanWaits waits_;
  std::optional<ProcessSection> last_;     // the last complete scan, served until the next one
  std::optional<ProcessMemorySection> last_memory_;  // the same scan's OS-neutral view
  std::optional<Error> last_failure_;      // the last scan failed: the source is down until one succeeds
  std::chrono::steady_clock::time_point next_scan_at_{};
  bool collected_any_ = false;             // a scan was collected: the next ones are paced
  std::string census_degraded_;            // the census's degraded() after the last collected scan
  bool stuck_ = false;                     // a scan has run past waits_.stuck and is still running
};

}  // namespace memdiag
