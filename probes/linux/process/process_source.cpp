// SPDX-License-Identifier: Apache-2.0
#include "probes/linux/process/process_source.hpp"

#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <system_error>

namespace memdiag {
namespace {

// The OS-neutral view of a scan: the selected processes' memory in the terms every platform has.
ProcessMemorySection process_memory_of(const ProcessSection& scan) {
  ProcessMemorySection view;
  view.total_processes = scan.processes;
  view.processes.reserve(scan.selected.size());
  for (const SelectedProcess& p : scan.selected) {
    view.processes.push_back(ProcessMemory{.pid = p.pid,
                                           .name = p.comm,
                                           .resident_bytes = p.rss_anon_bytes + p.rss_file_bytes + p.rss_shmem_bytes,
                                           .swap_bytes = p.swap_bytes,
                                           .virtual_bytes = p.virtual_bytes,
                                           .map_areas = p.map_count,
                                           .committed_private_bytes = p.committed_private_bytes,
                                           .unbacked_promise_bytes = p.unbacked_promise_bytes,
                                           .peak_resident_bytes = std::nullopt,
                                           .page_faults_total = std::nullopt});
  }
  return view;
}

}  // namespace

struct ProcessSource::Worker {
  Worker(const KernelPaths& paths, const ProcessOptions& options, BpfScannerOpener open_bpf, int self_pid)
      : census(paths, options, std::move(open_bpf), self_pid) {}

  // Used by the worker thread only once it runs (probe() takes mu and checks `busy`).
  ProcessCensus census;

  std::mutex mu;
  std::condition_variable cv;
  bool requested = false;  // a scan asked for, not yet begun
  bool busy = false;       // requested or running
  bool stopping = false;
  std::chrono::steady_clock::time_point started_at{};
  std::optional<Expected<ProcessSection>> result;  // finished, not yet collected
  std::string degraded;                            // census.degraded() after that scan
  double cpu_seconds = 0;                          // the worker's CPU time for that scan
  double paced_cpu_seconds = 0;                    // of it, what paces the next scan

  static void run(std::shared_ptr<Worker> w) {
    pthread_setname_np(pthread_self(), "memdiag-procs");
    std::unique_lock lock(w->mu);
    for (;;) {
      w->cv.wait(lock, [&] { return w->requested || w->stopping; });
      if (w->stopping) return;
      w->requested = false;
      lock.unlock();
      const double cpu_before = thread_cpu_seconds();
      Expected<ProcessSection> scanned = make_error("process scan: no result");
      try {
        scanned = w->census.take();
      } catch (const std::exception& e) {  // out of memory, most likely: a failed scan, not a dead daemon
        scanned = make_error(std::string("process scan: ") + e.what());
      }
      // The maps of promise holders are read on a budget of their own (the census paces it).
      const double cpu = thread_cpu_seconds() - cpu_before;
      const double paced_cpu = std::max(0.0, cpu - w->census.not_due_cpu_seconds());
      std::string degraded = w->census.degraded();
      lock.lock();
      w->result = std::move(scanned);
      w->degraded = std::move(degraded);
      w->cpu_seconds = cpu;
      w->paced_cpu_seconds = paced_cpu;
      w->busy = false;
      w->cv.notify_all();
    }
  }
};

ProcessSource::ProcessSource(const KernelPaths& paths, const ProcessOptions& options, BpfScannerOpener open_bpf,
                             int self_pid, ScanWaits waits)
    : worker_(std::make_shared<Worker>(paths, options, std::move(open_bpf), self_pid)),
      waits_(waits) {}

ProcessSource::~ProcessSource() {
  bool busy = false;
  {
    std::lock_guard lock(worker_->mu);
    worker_->stopping = true;
    busy = worker_->busy;
  }
  worker_->cv.notify_all();
  if (!thread_.joinable()) return;
  // Idle, it sees `stopping` at once; busy, it may be blocked on a process's mmap_lock for as
  // long as that lock is held. It keeps its own reference to the shared state.
  if (busy) {
    thread_.detach();
  } else {
    thread_.join();
  }
}

Status ProcessSource::probe() {
  std::lock_guard lock(worker_->mu);
  if (worker_->busy) return Ok{};  // the census is the worker's now; it keeps its scanner
  return worker_->census.probe();
}

Status ProcessSource::sample(Snapshot& out) {
  const auto now = std::chrono::steady_clock::now();
  std::unique_lock lock(worker_->mu);
  if (!worker_->busy && !worker_->result && now >= next_scan_at_) {
    if (!thread_.joinable()) {
      try {
        thread_ = std::thread(Worker::run, worker_);
      } catch (const std::system_error& e) {
        return make_error(std::string("cannot start the process scan thread: ") + e.what());
      }
    }
    worker_->requested = true;
    worker_->busy = true;
    worker_->started_at = now;
    worker_->cv.notify_all();
    worker_->cv.wait_for(lock, last_ ? waits_.later : waits_.first, [this] { return !worker_->busy; });
  }
  if (worker_->result) {
    Expected<ProcessSection> scanned = std::move(*worker_->result);
    worker_->result.reset();
    census_degraded_ = worker_->degraded;
    // Paced by the CPU the scan cost, not its wall time: a scan that sat blocked on a
    // process's mmap_lock for minutes cost next to nothing, and must not stop scanning for
    // 100 times as long. Capped, so a slow scan never leaves the section hours old.
    // The first scan is not paced by (see the header).
    const double paced_cpu_seconds = collected_any_ ? worker_->paced_cpu_seconds : 0.0;
    collected_any_ = true;
    const std::chrono::duration<double> pause = std::min<std::chrono::duration<double>>(
        std::chrono::duration<double>(paced_cpu_seconds * kScanCostFactor), kMaxPause);
    next_scan_at_ = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(pause);
    if (scanned) {
      scanned->scan_cpu_seconds = worker_->cpu_seconds;
      last_ = std::move(scanned).value();
      last_memory_ = process_memory_of(*last_);
      last_failure_.reset();
    } else {
      last_failure_ = scanned.error();
    }
  }
  const bool in_flight = worker_->busy;
  const double in_flight_seconds =
      in_flight ? std::chrono::duration<double>(std::chrono::steady_clock::now() - worker_->started_at).count() : 0;
  lock.unlock();

  stuck_ = in_flight && in_flight_seconds * 1000 >= static_cast<double>(waits_.stuck.count());
  if (last_failure_) return *last_failure_;
  if (!last_) {
    return make_error("the first process scan has run for " + std::to_string(static_cast<int>(in_flight_seconds)) +
                      " s without finishing: a process's files cannot be read (its mmap_lock may be held by a "
                      "task stuck in reclaim)");
  }
  out.processes = *last_;
  out.processes->scan_in_flight_seconds = in_flight_seconds;
  out.process_memory = last_memory_;
  return Ok{};
}

std::string ProcessSource::degraded() const {
  std::string reasons = census_degraded_;
  if (stuck_) {
    if (!reasons.empty()) reasons += "; ";
    // Constant text: degraded() is logged when it changes, not once per sample.
    const auto ms = waits_.stuck.count();
    reasons += "a process scan has been running for over " +
               (ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms") +
               " (a process's files cannot be read: its mmap_lock may be held by a task stuck in reclaim); the "
               "last complete scan is served meanwhile";
  }
  return reasons;
}

}  // namespace memdiag
