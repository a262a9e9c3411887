// SPDX-License-Identifier: Apache-2.0
#include "daemon/sampler.hpp"
#include "daemon/stack_prefault.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "probes/analysis/derive_figures.hpp"

namespace memdiag {
namespace {

std::int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Sampler::Sampler(SnapshotStore& store, std::vector<std::unique_ptr<Source>> sources, std::chrono::milliseconds interval,
                 const analysis::DiagnosisSettings& diagnosis)
    : store_(store),
      diagnosis_model_(diagnosis),
      slots_(make_slots(std::move(sources))),
      interval_ms_(interval.count()),
      heartbeat_ns_(steady_now_ns()) {}

Sampler::~Sampler() {
  if (thread_.joinable()) {
    // A thread stuck in a kernel read cannot be joined; run_daemon exits the process before
    // this point in that case. Elsewhere (tests), detaching is the lesser evil.
    if (!stop(std::chrono::milliseconds(2000))) thread_.detach();
  }
}

std::vector<Sampler::Slot> Sampler::make_slots(std::vector<std::unique_ptr<Source>> sources) {
  std::vector<Slot> slots(sources.size());
  for (std::size_t i = 0; i < sources.size(); ++i) slots[i].source = std::move(sources[i]);
  return slots;
}

void Sampler::log_transition(Slot& slot, Slot::State next, const std::string& reason) {
  using State = Slot::State;
  const auto now = std::chrono::steady_clock::now();
  const std::string_view name = slot.source->name();
  const bool changed = next != slot.state;
  // A down source's reason can carry live values (an excerpt of the bad line): repeat it
  // only rarely, so the log says what happened, not what every sample saw.
  const bool reason_news = next == State::kDown && reason != slot.logged_reason &&
                           now - slot.logged_at > std::chrono::minutes(10);
  if (next == State::kUnsupported && changed) {
    spdlog::warn("source {} is unsupported here: {}", name, reason);
  } else if (next == State::kDown && (changed || reason_news)) {
    spdlog::warn("source {} is down: {}", name, reason);
  } else if (next == State::kUp && (slot.state == State::kDown || slot.state == State::kUnsupported)) {
    spdlog::info("source {} is back up", name);
  } else {
    slot.state = next;
    return;
  }
  slot.state = next;
  slot.logged_reason = reason;
  slot.logged_at = now;
}

SourceStatus Sampler::sample_slot(Slot& slot, Snapshot& snapshot) {
  SourceStatus status;
  status.name = std::string(slot.source->name());
  const auto begin = std::chrono::steady_clock::now();
  if (!slot.supported) {
    // Probing is a stat or two: cheap enough to retry every sample, so a file that appears
    // later (a module loaded, a remount) is picked up without a restart.
    if (auto st = slot.source->probe(); !st) {
      status.error = st.error().message;
      log_transition(slot, Slot::State::kUnsupported, status.error);
      return status;
    }
    slot.supported = true;
  }
  Status result = slot.source->sample(snapshot);
  status.duration_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  status.up = result.ok();
  if (!status.up) status.error = result.error().message;
  log_transition(slot, status.up ? Slot::State::kUp : Slot::State::kDown, status.error);
  if (status.up) log_degraded(slot);
  return status;
}

void Sampler::log_degraded(Slot& slot) {
  std::string now_degraded = slot.source->degraded();
  if (now_degraded == slot.logged_degraded) return;
  const auto now = std::chrono::steady_clock::now();
  const std::string_view name = slot.source->name();
  if (now_degraded.empty()) {
    spdlog::info("source {} is complete again", name);
  } else if (slot.logged_degraded.empty() || now - slot.degraded_logged_at > std::chrono::minutes(10)) {
    spdlog::warn("source {} is partly degraded: {}", name, now_degraded);
  } else {
    return;  // another reason soon after the last: keep the log quiet
  }
  slot.logged_degraded = std::move(now_degraded);
  slot.degraded_logged_at = now;
}

SnapshotPtr Sampler::sample_now() {
  auto snapshot = std::make_shared<Snapshot>();
  snapshot->sequence = ++sequence_;
  snapshot->taken_at = std::chrono::system_clock::now();
  snapshot->sources.reserve(slots_.size());
  for (auto& slot : slots_) snapshot->sources.push_back(sample_slot(slot, *snapshot));
  apply_pending_diagnosis();
  for (const VerdictTransition& t : diagnosis_model_.assess(*snapshot, store_.recent())) {
    // One line per change of level, the story `journalctl -u memdiagd` tells; rising is a warning.
    const bool rising = t.to > t.from;
    if (t.scope == "node") {
      spdlog::log(rising ? spdlog::level::warn : spdlog::level::info, "stall level {} -> {}: {}", to_string(t.from),
                  to_string(t.to), t.evidence);
    } else {
      spdlog::log(rising ? spdlog::level::warn : spdlog::level::info, "cgroup stall {} -> {}: cgroup={} {}",
                  to_string(t.from), to_string(t.to), t.scope, t.evidence);
    }
  }
  if (before_publish_) before_publish_(*snapshot);
  SnapshotPtr published = std::move(snapshot);
  store_.publish(published);
  heartbeat_ns_.store(steady_now_ns(), std::memory_order_relaxed);
  if (on_sample_) on_sample_(*published);
  return published;
}

void Sampler::start() {
  heartbeat_ns_.store(steady_now_ns());
  thread_ = std::thread([this] {
    prefault_stack();
    run();
  });
}

void Sampler::run() {
  auto next = std::chrono::steady_clock::now();
  for (;;) {
    if (apply_pending()) next = std::chrono::steady_clock::now();  // new interval counts from now
    sample_now();
    next += std::chrono::milliseconds(interval_ms_.load());
    const auto now = std::chrono::steady_clock::now();
    if (next < now) next = now;  // fell behind (slow /proc, suspended VM): do not burst to catch up
    std::unique_lock lock(mutex_);
    if (wake_.wait_until(lock, next, [this] { return stop_ || pending_.has_value(); }) && stop_) break;
  }
  finished_.store(true);
}

bool Sampler::apply_pending() {
  std::optional<std::pair<std::vector<SourcePlan>, std::chrono::milliseconds>> pending;
  {
    std::lock_guard lock(mutex_);
    pending.swap(pending_);
  }
  if (!pending) return false;
  std::vector<Slot> next;
  next.reserve(pending->first.size());
  std::size_t kept = 0;
  for (SourcePlan& plan : pending->first) {
    if (plan.keep_running) {
      auto running = std::find_if(slots_.begin(), slots_.end(), [&plan](const Slot& slot) {
        return slot.source && slot.source->name() == plan.source->name();
      });
      if (running != slots_.end()) {
        next.push_back(std::move(*running));  // its state and what it logged carry on
        ++kept;
        continue;
      }
    }
    Slot slot;
    slot.source = std::move(plan.source);
    next.push_back(std::move(slot));
  }
  slots_ = std::move(next);  // the replaced sources end here, on the sampling thread
  interval_ms_.store(pending->second.count());
  spdlog::debug("sources reconfigured: {} kept running, {} new", kept, slots_.size() - kept);
  return true;
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

void Sampler::reconfigure(std::vector<SourcePlan> plan, std::chrono::milliseconds interval) {
  {
    std::lock_guard lock(mutex_);
    if (pending_) {
      // Two reloads within one tick: the first plan was never applied, so a source it was going
      // to replace must be replaced now too ("unchanged" was judged against that plan's config).
      for (SourcePlan& p : plan) {
        if (!p.keep_running) continue;
        for (const SourcePlan& earlier : pending_->first) {
          if (!earlier.keep_running && earlier.source->name() == p.source->name()) p.keep_running = false;
        }
      }
    }
    pending_.emplace(std::move(plan), interval);
  }
  wake_.notify_all();
}

void Sampler::set_diagnosis(const analysis::DiagnosisSettings& diagnosis) {
  std::lock_guard lock(mutex_);
  pending_diagnosis_ = diagnosis;
}

void Sampler::apply_pending_diagnosis() {
  std::optional<analysis::DiagnosisSettings> pending;
  {
    std::lock_guard lock(mutex_);
    pending.swap(pending_diagnosis_);
  }
  if (pending) diagnosis_model_.set_settings(*pending);
}

bool Sampler::healthy() const {
  // A sample may take a while under pressure; stuck means well past two intervals.
  const std::int64_t limit_ns = (2 * interval_ms_.load() + 2000) * 1'000'000;
  return steady_now_ns() - heartbeat_ns_.load(std::memory_order_relaxed) < limit_ns;
}

std::vector<const Source*> Sampler::running_sources() const {
  std::vector<const Source*> running;
  running.reserve(slots_.size());
  for (const Slot& slot : slots_) running.push_back(slot.source.get());
  return running;
}

std::chrono::milliseconds Sampler::interval() const { return std::chrono::milliseconds(interval_ms_.load()); }

}  // namespace memdiag
