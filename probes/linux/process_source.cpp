#include "probes/linux/process_source.hpp"

#include <pthread.h>

#include <condition_variable>
#include <mutex>

namespace memdiag {

struct ProcessSource::Worker {
  Worker(const KernelPaths& paths, const SourceOptions& options, BpfScannerOpener open_bpf, int self_pid)
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

  static void run(std::shared_ptr<Worker> w) {
    pthread_setname_np(pthread_self(), "memdiag-procs");
    std::unique_lock lock(w->mu);
    for (;;) {
      w->cv.wait(lock, [&] { return w->requested || w->stopping; });
      if (w->stopping) return;
      w->requested = false;
      lock.unlock();
      Expected<ProcessSection> scanned = w->census.take();
      std::string degraded = w->census.degraded();
      lock.lock();
      w->result = std::move(scanned);
      w->degraded = std::move(degraded);
      w->busy = false;
      w->cv.notify_all();
    }
  }
};

ProcessSource::ProcessSource(const KernelPaths& paths, const SourceOptions& options, BpfScannerOpener open_bpf,
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
    if (!thread_.joinable()) thread_ = std::thread(Worker::run, worker_);
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
    // Paced by what the scan itself took (not counting how late this sample collects it).
    const std::chrono::duration<double> took =
        scanned ? std::chrono::duration<double>(scanned->scan_seconds) : std::chrono::steady_clock::now() - worker_->started_at;
    next_scan_at_ = worker_->started_at + std::chrono::duration_cast<std::chrono::steady_clock::duration>(took * kScanCostFactor);
    if (scanned) {
      last_ = std::move(scanned).value();
      last_failure_.reset();
    } else {
      last_failure_ = scanned.error();
    }
  }
  const bool in_flight = worker_->busy;
  const double in_flight_seconds =
      in_flight ? std::chrono::duration<double>(std::chrono::steady_clock::now() - worker_->started_at).count() : 0;
  lock.unlock();

  overdue_ = in_flight && in_flight_seconds * 1000 >= static_cast<double>(waits_.later.count());
  if (last_failure_) return *last_failure_;
  if (!last_) {
    return make_error("the first process scan has run for " + std::to_string(static_cast<int>(in_flight_seconds)) +
                      " s without finishing: a process's files cannot be read (its mmap_lock may be held by a "
                      "task stuck in reclaim)");
  }
  out.processes = *last_;
  out.processes->scan_in_flight_seconds = in_flight_seconds;
  return Ok{};
}

std::string ProcessSource::degraded() const {
  std::string reasons = census_degraded_;
  if (overdue_) {
    if (!reasons.empty()) reasons += "; ";
    // Constant text: degraded() is logged when it changes, not once per sample.
    reasons += "a process scan is taking longer than a sample can wait (a process's files cannot be read: its "
               "mmap_lock may be held by a task stuck in reclaim); the last complete scan is served meanwhile";
  }
  return reasons;
}

}  // namespace memdiag
