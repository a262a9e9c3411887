// SPDX-License-Identifier: Apache-2.0
#include "probes/canary/canary_runner.hpp"

#include <pthread.h>
#include <sys/mman.h>

#include <new>

#include "probes/canary/canary_cycle.hpp"
#include "probes/canary/cgroup_headroom.hpp"
#include "probes/linux/node/pressure_parser.hpp"

namespace memdiag::canary {
namespace {

alloc::AllocatorOptions allocator_options(const CanaryOptions& options) {
  alloc::AllocatorOptions a;
  a.process_ceiling_bytes = options.ceiling_bytes;
  // Address space for the ceiling twice over, not the default tens of GiB: the daemon's own
  // virtual size shows in memdiag_process_virtual_bytes, and should not alarm anyone.
  a.reserve_bytes = options.ceiling_bytes * 2;
  // Each cycle releases explicitly; nothing is left for a decay thread to find.
  a.background_decay = false;
  // Its bookkeeping stays resident: on a drowning node a canary cycle must time the faults of
  // its working set, not of its own span records.
  a.lock_metadata = true;
  return a;
}

}  // namespace

CanaryRunner::CanaryRunner(const CanaryOptions& options)
    : options_(options),
      allocator_(allocator_options(options)),
      psi_(options.psi_path, KernelFile::Reads::kOneRecord, 256) {
  // The counters in a page of their own, locked: a scrape reads them without faulting even
  // when memory is short. mlock can fail (RLIMIT_MEMLOCK); then they are ordinary memory.
  void* page = ::mmap(nullptr, sizeof(CanaryReading), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) throw std::bad_alloc();
  locked_ = ::mlock(page, sizeof(CanaryReading)) == 0;
  reading_ = new (page) CanaryReading();
}

CanaryRunner::~CanaryRunner() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  reading_->~CanaryReading();
  ::munmap(reading_, sizeof(CanaryReading));
}

void CanaryRunner::start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] {
    ::pthread_setname_np(::pthread_self(), "memdiag-canary");  // its CPU shows apart in top -H
    loop();
  });
}

void CanaryRunner::loop() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    tick();
    lock.lock();
    wake_.wait_for(lock, options_.interval, [this] { return stopping_; });
  }
}

std::optional<double> CanaryRunner::psi_full() {
  auto text = psi_.read();
  if (!text) return std::nullopt;
  auto parsed = parse_pressure(*text);
  if (!parsed || !parsed->full) return std::nullopt;
  return parsed->full->avg10 * 100;
}

void CanaryRunner::tick() {
  const std::optional<double> full = psi_full();
  const std::optional<std::uint64_t> headroom =
      options_.cgroup_dir.empty() ? std::nullopt
                                  : cgroup_headroom(options_.cgroup_dir, options_.cgroup_root, options_.cgroup_v2);
  if ((full && *full >= options_.backoff_psi_full) || (headroom && *headroom < 2 * options_.working_set_bytes)) {
    std::lock_guard lock(mutex_);
    ++reading_->skipped;
    reading_->backing_off = true;
    reading_->last_psi_full_avg10 = full.value_or(0);
    return;
  }
  // The cycle writes into a local copy: a scrape never waits for a cycle's page faults.
  CanaryReading cycle;
  run_cycle(allocator_, options_.working_set_bytes, cycle);
  std::lock_guard lock(mutex_);
  reading_->page_fault.add(cycle.page_fault);
  reading_->cycle.add(cycle.cycle);
  reading_->cycles += cycle.cycles;
  reading_->failures += cycle.failures;
  reading_->backing_off = false;
  reading_->last_psi_full_avg10 = full.value_or(0);
}

CanaryReading CanaryRunner::reading() const {
  std::lock_guard lock(mutex_);
  return *reading_;
}

CanaryAllocatorStats CanaryRunner::allocator_stats() const {
  const alloc::AllocatorStats s = allocator_.stats();
  CanaryAllocatorStats out;
  out.live_bytes = s.live_bytes;
  out.held_bytes = s.held_bytes;
  out.reserved_bytes = s.reserved_bytes;
  out.released_bytes_total = s.released_bytes_total;
  out.mappings = s.mappings;
  out.ceiling_hits_total = s.ceiling_hits_total;
  out.failed_allocations_total = s.failed_allocations_total;
  out.ceiling_bytes = options_.ceiling_bytes;
  return out;
}

}  // namespace memdiag::canary
