// SPDX-License-Identifier: Apache-2.0
// The canary: a cycle (canary_cycle.hpp) at every tick(), every `interval` on a
// thread of its own after start(), on an allocator instance of its own with a hard ceiling. It
// must never add to a crisis: when node memory PSI `full` (avg10) is at or above
// `backoff_psi_full`, or when the daemon's memory cgroup (cgroup_dir) has less than twice the
// working set left below a limit (cgroup_headroom.hpp: the cycle would push it, and the daemon
// in it, into reclaim and throttling at that limit), due cycles are skipped and counted until
// it passes. Its counters live in
// one mlock()ed page, so reading them out never waits on a page fault when the node is drowning.
// memdiagd runs it in a canary child process (canary_child_main.hpp), ticking on the child's
// main thread, so the lock and the working set are the child's; tests run it in-process.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "probes/canary/size_class_allocator.hpp"
#include "probes/core/canary_section.hpp"
#include "probes/linux/kernel_file.hpp"

namespace memdiag::canary {

struct CanaryOptions {
  std::chrono::milliseconds interval{10000};
  std::size_t working_set_bytes = 16u << 20;
  // The allocator's process ceiling: the canary never holds more than this.
  std::size_t ceiling_bytes = 64u << 20;
  double backoff_psi_full = 10.0;  // percent of time all tasks stalled on memory (avg10)
  std::string psi_path = "/proc/pressure/memory";
  // The memory cgroup directory whose headroom the canary respects (the daemon's canary: the
  // daemon's cgroup) and the hierarchy's mount point; empty: only PSI is looked at.
  std::string cgroup_dir;
  std::string cgroup_root;
  bool cgroup_v2 = true;
};

class CanaryRunner {
 public:
  explicit CanaryRunner(const CanaryOptions& options);
  ~CanaryRunner();  // stops the thread
  CanaryRunner(const CanaryRunner&) = delete;
  CanaryRunner& operator=(const CanaryRunner&) = delete;

  // Starts the thread: a tick now, then one every interval.
  void start();
  // One due cycle: skipped (and counted) when PSI is high, else run.
  void tick();

  CanaryReading reading() const;
  CanaryAllocatorStats allocator_stats() const;
  // Its counters and its allocator's bookkeeping are mlock()ed (false: RLIMIT_MEMLOCK refused).
  bool bookkeeping_locked() const { return locked_ && allocator_.metadata_locked(); }

 private:
  void loop();
  // PSI full avg10 in percent; nullopt when the file cannot be read (no PSI: never back off).
  std::optional<double> psi_full();

  CanaryOptions options_;
  alloc::SizeClassAllocator allocator_;
  KernelFile psi_;
  CanaryReading* reading_;  // in an mlock()ed page of its own
  bool locked_ = false;
  mutable std::mutex mutex_;  // guards *reading_
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace memdiag::canary
