// SPDX-License-Identifier: Apache-2.0
// The sampler thread: every interval it asks each source for its section, publishes the
// snapshot, and beats a heartbeat /healthz reads. Source trouble is logged once per change of
// state, never per sample.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "probes/analysis/diagnosis_settings.hpp"
#include "probes/analysis/diagnosis_model.hpp"
#include "probes/core/snapshot_store.hpp"
#include "probes/core/source.hpp"

namespace memdiag {

class Sampler {
 public:
  Sampler(SnapshotStore& store, std::vector<std::unique_ptr<Source>> sources, std::chrono::milliseconds interval,
          const analysis::DiagnosisSettings& diagnosis = {});
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // Takes one sample on the calling thread and publishes it.
  SnapshotPtr sample_now();

  void start();
  // Asks the thread to stop and waits up to `grace`; false if it is stuck (in a kernel read).
  bool stop(std::chrono::milliseconds grace);

  // One source after a reload. keep_running: its settings did not change, so the running
  // instance of that name carries on with its state (counters, eBPF programs, cgroup watches,
  // canary children, a process scan in flight) and `source`, built all the same, is dropped;
  // used only when no such instance runs.
  struct SourcePlan {
    std::unique_ptr<Source> source;
    bool keep_running = false;
  };
  // Swaps in the planned sources and interval at the next tick without waiting for a running
  // sample. A plan not applied yet is replaced; what it would have started counts as running.
  void reconfigure(std::vector<SourcePlan> plan, std::chrono::milliseconds interval);

  // The running instances, in sampling order: which object samples each source, for tests of
  // what a reload keeps. Only while the sampling thread is not running (before start, after stop).
  std::vector<const Source*> running_sources() const;

  // New thresholds for the verdicts, from the next sample on. Changed stall thresholds start
  // the stall model afresh (its hysteresis was judged by the old ones).
  void set_diagnosis(const analysis::DiagnosisSettings& diagnosis);

  // Called after every published sample, on the sampling thread (keep it short: a watchdog
  // ping, a status line). Set before start().
  void set_on_sample(std::function<void(const Snapshot&)> hook) { on_sample_ = std::move(hook); }
  // Called with every sample just before it is published, on the sampling thread: for what is
  // served beside the sample and must not lag it (the daemon's own process_* figures), so that
  // no scrape sees a sample without them. Set before start().
  void set_before_publish(std::function<void(const Snapshot&)> hook) { before_publish_ = std::move(hook); }

  // True while samples keep completing on time.
  bool healthy() const;
  std::chrono::milliseconds interval() const;

 private:
  struct Slot {
    std::unique_ptr<Source> source;
    bool supported = false;  // probe() passed; re-probed every sample until it does
    enum class State { kNew, kUp, kDown, kUnsupported } state = State::kNew;
    std::string logged_reason;
    std::chrono::steady_clock::time_point logged_at;
    std::string logged_degraded;  // Source::degraded() as last logged
    std::chrono::steady_clock::time_point degraded_logged_at;
  };
  // Logs state changes once; a reason that keeps changing while down at most every 10 min.
  static void log_transition(Slot& slot, Slot::State next, const std::string& reason);
  // Logs when an up source becomes partly degraded, recovers, or (at most every 10 min) is
  // degraded for another reason.
  static void log_degraded(Slot& slot);
  static std::vector<Slot> make_slots(std::vector<std::unique_ptr<Source>> sources);
  void run();
  bool apply_pending();  // true if new sources were swapped in
  SourceStatus sample_slot(Slot& slot, Snapshot& snapshot);

  SnapshotStore& store_;
  // The diagnosis, whose levels, growth and trends span samples: touched by the sampling thread
  // only; set_diagnosis() hands new settings over through pending_diagnosis_.
  analysis::DiagnosisModel diagnosis_model_;
  void apply_pending_diagnosis();
  std::vector<Slot> slots_;  // touched only by the sampling thread (or before start)
  std::uint64_t sequence_ = 0;

  std::atomic<std::int64_t> interval_ms_;
  std::atomic<std::int64_t> heartbeat_ns_;

  std::mutex mutex_;  // guards stop_, pending_ and pending_diagnosis_
  std::optional<analysis::DiagnosisSettings> pending_diagnosis_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::optional<std::pair<std::vector<SourcePlan>, std::chrono::milliseconds>> pending_;

  std::function<void(const Snapshot&)> on_sample_;
  std::function<void(const Snapshot&)> before_publish_;
  std::thread thread_;
  std::atomic<bool> finished_{false};
};

}  // namespace memdiag
