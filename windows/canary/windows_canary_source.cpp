// SPDX-License-Identifier: Apache-2.0
#include "windows/canary/windows_canary_source.hpp"

#include <windows.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "probes/canary/canary_cycle.hpp"
#include "probes/canary/canary_setting_keys.hpp"
#include "probes/canary/size_class_allocator.hpp"

namespace memdiag::windows {
namespace {

class WindowsCanarySource final : public Source {
 public:
  explicit WindowsCanarySource(const CanarySettings& settings)
      : settings_(settings), allocator_(allocator_options(settings)) {}

  ~WindowsCanarySource() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
    if (low_memory_ != nullptr) ::CloseHandle(low_memory_);
  }

  std::string_view name() const override { return "canary"; }

  Status probe() override {
    if (thread_.joinable()) return Ok{};
    low_memory_ = ::CreateMemoryResourceNotification(LowMemoryResourceNotification);
    thread_ = std::thread([this] { loop(); });
    return Ok{};
  }

  Status sample(Snapshot& out) override {
    CanarySection section;
    {
      std::lock_guard lock(mutex_);
      section.node = reading_;
    }
    section.node_running = true;  // the canary's thread lives as long as the source
    const alloc::AllocatorStats s = allocator_.stats();
    section.allocator.live_bytes = s.live_bytes;
    section.allocator.held_bytes = s.held_bytes;
    section.allocator.reserved_bytes = s.reserved_bytes;
    section.allocator.released_bytes_total = s.released_bytes_total;
    section.allocator.mappings = s.mappings;
    section.allocator.ceiling_hits_total = s.ceiling_hits_total;
    section.allocator.failed_allocations_total = s.failed_allocations_total;
    out.canary = std::move(section);
    return Ok{};
  }

  std::string degraded() const override {
    return low_memory_ == nullptr ? "no low-memory notification to back off on: cycles run whatever the pressure"
                                  : std::string();
  }

 private:
  static alloc::AllocatorOptions allocator_options(const CanarySettings& settings) {
    alloc::AllocatorOptions o;
    o.process_ceiling_bytes = settings.ceiling_bytes;
    o.reserve_bytes = 2 * settings.ceiling_bytes;  // as Linux's canary: twice its ceiling
    o.background_decay = false;                    // each cycle releases what it used
    return o;
  }

  bool memory_is_low() const {
    BOOL low = FALSE;
    return low_memory_ != nullptr && ::QueryMemoryResourceNotification(low_memory_, &low) && low;
  }

  void loop() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      lock.unlock();
      tick();
      lock.lock();
      wake_.wait_for(lock, settings_.interval, [this] { return stopping_; });
    }
  }

  void tick() {
    if (memory_is_low()) {
      std::lock_guard lock(mutex_);
      ++reading_.skipped;
      reading_.backing_off = true;
      return;
    }
    // The cycle writes into a local copy: a scrape never waits for a cycle's page faults.
    CanaryReading cycle;
    canary::run_cycle(allocator_, settings_.working_set_bytes, cycle);
    std::lock_guard lock(mutex_);
    reading_.add_counts(cycle);
    reading_.backing_off = false;
  }

  const CanarySettings settings_;
  alloc::SizeClassAllocator allocator_;
  HANDLE low_memory_ = nullptr;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  CanaryReading reading_;
  std::thread thread_;
};

}  // namespace

SourceRegistration windows_canary_registration() {
  return register_source(SourceSpec<CanarySettings>{
      .name = "canary",
      .platform = Platform::kWindows,
      .keys =
          {
              {"interval", canary::read_interval},
              {"working_set_bytes", canary::read_working_set_bytes},
              {"ceiling_bytes", canary::read_ceiling_bytes},
          },
      .check_together = canary::check_sizes,
      .make = [](const SourceContext&, const CanarySettings& settings) -> std::unique_ptr<Source> {
        return std::make_unique<WindowsCanarySource>(settings);
      },
  });
}

}  // namespace memdiag::windows
