// SPDX-License-Identifier: Apache-2.0
// A canary in a child process: `program --canary-child ...` (memdiagd run
// again, canary_child_main.hpp) runs the canary's cycles and sends a CanaryChildReport through a
// pipe after each one; poll() keeps the latest. The daemon's own canary runs this way, in the
// daemon's memory cgroup, so its working set is never in the daemon's RSS and its page faults
// are an ordinary unlocked process's even when the daemon locks its own memory; a cgroup canary
// (cgroup_canary.hpp) is one whose child joins a chosen cgroup before it starts.
//
// A child that exits is started again at most once per restart_after; what the children before
// it counted is carried over, so counters never go backwards. The destructor kills and reaps
// the child; PR_SET_PDEATHSIG and the child's own check of its parent cover a parent that dies
// without unwinding. The death signal follows the thread that forked: children are started from
// the sampler thread, which lives as long as the daemon.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "probes/canary/canary_child_report.hpp"
#include "probes/canary/canary_runner.hpp"

namespace memdiag::canary {

struct CanaryChildStatus {
  bool running = false;
  pid_t pid = -1;     // the running child's, -1 when none
  std::string error;  // why none runs (could not start, exited), until one does again
  bool reported = false;  // the running child has sent a report (bookkeeping_locked is its)
  // Counters summed over every child so far; the gauges (backing_off, the PSI reading, the
  // allocator's live/held/reserved bytes and mappings) are the running child's, 0 without one.
  CanaryChildReport report;
};

class CanaryChild {
 public:
  static constexpr std::chrono::seconds kRestartAfter{60};

  // program: the binary with the --canary-child mode (memdiagd). join_cgroup_dirs: cgroup
  // directories the child moves into before it execs (the v1 memory directory, and the cgroup2
  // twin on a hybrid host); empty: it stays in this process's cgroups. restart_after: the least
  // time between two starts.
  CanaryChild(CanaryOptions options, std::string program, std::vector<std::string> join_cgroup_dirs = {},
              std::chrono::milliseconds restart_after = kRestartAfter);
  ~CanaryChild();  // kills and reaps the child
  CanaryChild(const CanaryChild&) = delete;
  CanaryChild& operator=(const CanaryChild&) = delete;

  // Reaps a child that exited, starts one if none runs (and restart_after has passed since the
  // last start), then takes the latest report the child sent.
  CanaryChildStatus poll();

 private:
  void start();
  void stop();
  void drain();  // reads what the child sent so far

  CanaryOptions options_;
  std::string program_;
  std::vector<std::string> join_cgroup_dirs_;
  std::chrono::milliseconds restart_after_;
  pid_t pid_ = -1;
  int from_child_ = -1;
  std::string error_;
  std::chrono::steady_clock::time_point started_at_{};
  bool ever_started_ = false;
  CanaryChildReport latest_;         // the running (or last) child's cumulative report
  bool latest_received_ = false;     // latest_ came from that child (not the zeroes it starts at)
  CanaryChildReport before_latest_;  // the counters of the children before it
};

}  // namespace memdiag::canary
