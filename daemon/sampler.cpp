#include "daemon/sampler.hpp"

#include <spdlog/spdlog.h>

namespace memdiag {
namespace {

std::int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Sampler::Sampler(SnapshotStore& store, std::vector<std::unique_ptr<Source>> sources, std::chrono::milliseconds interval)
    : store_(store),
      slots_(make_slots(std::move(sources))),
      interval_ms_(interval.count()),
      heartbeat_ns_(steady_now_ns()) {}

Sampler::~Sampler() {
  if (thread_.joinable()) {
    if (!stop(std::chrono::milliseconds(2000))) thread_.detach();
  }
}

std::vector<Sampler::Slot> Sampler::make_slots(std::vector<std::unique_ptr<Source>> sources) {
  std::vector<Slot> slots;
  for (auto& source : sources) {
    Slot slot;
    if (auto st = source->probe(); !st) {
      slot.unsupported = st.error().message;
      spdlog::warn("source {} is unsupported here: {}", source->name(), *slot.unsupported);
    }
    slot.source = std::move(source);
    slots.push_back(std::move(slot));
  }
  return slots;
}

SourceStatus Sampler::sample_slot(Slot& slot, Snapshot& snapshot) {
  SourceStatus status;
  status.name = std::string(slot.source->name());
  if (slot.unsupported) {
    status.error = *slot.unsupported;
    return status;
  }
  const auto begin = std::chrono::steady_clock::now();
  Status result = slot.source->sample(snapshot);
  status.duration_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  status.up = result.ok();
  if (!status.up) status.error = result.error().message;

  // Say it once: when a source goes down, when its reason changes, when it comes back.
  if (!status.up && (slot.was_up || slot.last_error != status.error)) {
    spdlog::warn("source {} is down: {}", status.name, status.error);
  } else if (status.up && !slot.was_up) {
    spdlog::info("source {} is back up", status.name);
  }
  slot.was_up = status.up;
  slot.last_error = status.error;
  return status;
}

SnapshotPtr Sampler::sample_now() {
  auto snapshot = std::make_shared<Snapshot>();
  snapshot->sequence = ++sequence_;
  snapshot->taken_at = std::chrono::system_clock::now();
  snapshot->taken_steady = std::chrono::steady_clock::now();
  snapshot->sources.reserve(slots_.size());
  for (auto& slot : slots_) snapshot->sources.push_back(sample_slot(slot, *snapshot));
  SnapshotPtr published = std::move(snapshot);
  store_.publish(published);
  heartbeat_ns_.store(steady_now_ns(), std::memory_order_relaxed);
  return published;
}

void Sampler::start() {
  heartbeat_ns_.store(steady_now_ns());
  thread_ = std::thread([this] { run(); });
}

void Sampler::run() {
  auto next = std::chrono::steady_clock::now();
  for (;;) {
    apply_pending();
    sample_now();
    next += std::chrono::milliseconds(interval_ms_.load());
    const auto now = std::chrono::steady_clock::now();
    if (next < now) next = now;  // fell behind (slow /proc, suspended VM): do not burst to catch up
    std::unique_lock lock(mutex_);
    if (wake_.wait_until(lock, next, [this] { return stop_ || pending_.has_value(); }) && stop_) break;
  }
  finished_.store(true);
}

void Sampler::apply_pending() {
  std::optional<std::pair<std::vector<std::unique_ptr<Source>>, std::chrono::milliseconds>> pending;
  {
    std::lock_guard lock(mutex_);
    pending.swap(pending_);
  }
  if (!pending) return;
  slots_ = make_slots(std::move(pending->first));
  interval_ms_.store(pending->second.count());
}

bool Sampler::stop(std::chrono::milliseconds grace) {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (!thread_.joinable()) return true;
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (!finished_.load() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!finished_.load()) return false;
  thread_.join();
  return true;
}

void Sampler::reconfigure(std::vector<std::unique_ptr<Source>> sources, std::chrono::milliseconds interval) {
  {
    std::lock_guard lock(mutex_);
    pending_.emplace(std::move(sources), interval);
  }
  wake_.notify_all();
}

bool Sampler::healthy() const {
  // A sample may take a while under pressure; stuck means well past two intervals.
  const std::int64_t limit_ns = (2 * interval_ms_.load() + 2000) * 1'000'000;
  return steady_now_ns() - heartbeat_ns_.load(std::memory_order_relaxed) < limit_ns;
}

std::chrono::milliseconds Sampler::interval() const { return std::chrono::milliseconds(interval_ms_.load()); }

}  // namespace memdiag
