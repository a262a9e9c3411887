// A canary inside a chosen memory cgroup (issue 6): a child process (this same binary, run as
// `memdiagd --canary-child ...`) is moved into the cgroup before it starts, runs canary cycles
// there, so its page faults are charged to and reclaimed within that cgroup's limit, and sends
// its cumulative reading back through a pipe after every cycle. The daemon reads the latest one
// at each sample. A child that exits is started again at most once a minute; what the children
// before it counted is carried over, so the exported counters never go backwards.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "probes/canary/canary_runner.hpp"
#include "probes/core/canary_section.hpp"

namespace memdiag::canary {

// The child's side: argv after "--canary-child". Runs until the parent goes; the exit code.
int run_canary_child(const std::vector<std::string>& args);

class CgroupCanary {
 public:
  static constexpr std::chrono::seconds kRestartAfter{60};

  // cgroup: path in the memory hierarchy ("/pod-x"); cgroup_dirs: its directories to join
  // (the v1 memory directory, and the cgroup2 twin on a hybrid host). self_exe: the binary to
  // run (normally /proc/self/exe). restart_after: the least time between two starts.
  CgroupCanary(std::string cgroup, std::vector<std::string> cgroup_dirs, CanaryOptions options,
               std::string self_exe = "/proc/self/exe",
               std::chrono::milliseconds restart_after = kRestartAfter);
  ~CgroupCanary();  // kills and reaps the child
  CgroupCanary(const CgroupCanary&) = delete;
  CgroupCanary& operator=(const CgroupCanary&) = delete;

  // Starts the child if it is not running (and may be restarted), then takes the latest
  // reading it sent.
  CgroupCanaryReading poll();

 private:
  void start();
  void stop();
  void drain();  // reads what the child sent so far

  std::string cgroup_;
  std::vector<std::string> cgroup_dirs_;
  CanaryOptions options_;
  std::string self_exe_;
  pid_t pid_ = -1;
  int from_child_ = -1;
  std::string error_;
  std::chrono::steady_clock::time_point started_at_{};
  bool ever_started_ = false;
  std::chrono::milliseconds restart_after_;
  CanaryReading latest_;          // the running (or last) child's cumulative reading
  CanaryReading before_latest_;   // the sum of the children before it
};

}  // namespace memdiag::canary
