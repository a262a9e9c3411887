// SPDX-License-Identifier: Apache-2.0
// The sampler and the snapshot store: publishing, the ring, failing sources, health.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>

#include "daemon/sampler.hpp"

namespace memdiag {
namespace {

// A source under the test's control: real Source interface, scripted outcome.
class ScriptedSource final : public Source {
 public:
  ScriptedSource(std::string name, bool supported) : name_(std::move(name)), supported_(supported) {}
  std::string_view name() const override { return name_; }
  Status probe() override { return supported_ ? Status(Ok{}) : Status(make_error("not on this kernel")); }
  Status sample(Snapshot& out) override {
    ++calls;
    if (also_count != nullptr) ++*also_count;
    if (fail.load()) return make_error("scripted failure");
    VmSysctlSection section;
    section.values.push_back({"overcommit_memory", static_cast<double>(calls.load())});
    out.vm_sysctl = section;
    return Ok{};
  }
  std::string degraded() const override { return degraded_text; }
  std::atomic<int> calls{0};
  std::atomic<int>* also_count = nullptr;  // outlives the source: for instances a test hands away
  std::atomic<bool> fail{false};
  std::string degraded_text;  // set only while the sampler thread is not running

 private:
  std::string name_;
  bool supported_;
};

// Polls `done` until it holds; false after `timeout`, a bound for a loaded machine, not the
// thing tested. The sampler tests wait for what they mean (calls, a snapshot's contents).
template <typename Predicate>
bool wait_until(Predicate done, std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

TEST(SnapshotStore, RingKeepsTheNewest) {
  SnapshotStore store(3);
  EXPECT_EQ(store.latest(), nullptr);
  for (int i = 1; i <= 5; ++i) {
    auto s = std::make_shared<Snapshot>();
    s->sequence = i;
    store.publish(s);
  }
  EXPECT_EQ(store.latest()->sequence, 5u);
  auto recent = store.recent();
  ASSERT_EQ(recent.size(), 3u);
  EXPECT_EQ(recent.front()->sequence, 3u);
  store.set_ring_capacity(1);
  EXPECT_EQ(store.ring_size(), 1u);
  EXPECT_EQ(store.latest()->sequence, 5u);
}

TEST(Sampler, FailingSourceDoesNotStopTheOthers) {
  SnapshotStore store(10);
  auto good = std::make_unique<ScriptedSource>("good", true);
  auto bad = std::make_unique<ScriptedSource>("bad", true);
  auto unsupported = std::make_unique<ScriptedSource>("unsupported", false);
  bad->fail = true;
  ScriptedSource* unsupported_raw = unsupported.get();
  std::vector<std::unique_ptr<Source>> sources;
  sources.push_back(std::move(bad));
  sources.push_back(std::move(good));
  sources.push_back(std::move(unsupported));
  Sampler sampler(store, std::move(sources), std::chrono::milliseconds(1000));
  auto snap = sampler.sample_now();
  ASSERT_EQ(snap->sources.size(), 3u);
  EXPECT_FALSE(snap->sources[0].up);
  EXPECT_EQ(snap->sources[0].error, "scripted failure");
  EXPECT_TRUE(snap->sources[1].up);
  EXPECT_FALSE(snap->sources[2].up);
  EXPECT_EQ(snap->sources[2].error, "not on this kernel");
  EXPECT_EQ(unsupported_raw->calls, 0);  // unsupported sources are not sampled
  ASSERT_TRUE(snap->vm_sysctl);
  EXPECT_EQ(store.latest(), snap);
}

TEST(Sampler, BeforePublishSeesEachSampleBeforeAnyReaderAndOnSampleAfter) {
  SnapshotStore store(10);
  std::vector<std::unique_ptr<Source>> sources;
  sources.push_back(std::make_unique<ScriptedSource>("good", true));
  Sampler sampler(store, std::move(sources), std::chrono::milliseconds(1000));
  std::vector<std::uint64_t> published_before, published_after;
  sampler.set_before_publish([&](const Snapshot& s) {
    published_before.push_back(store.latest() ? store.latest()->sequence : 0);
    EXPECT_NE(store.latest().get(), &s);
  });
  sampler.set_on_sample([&](const Snapshot& s) {
    EXPECT_EQ(store.latest().get(), &s);
    published_after.push_back(s.sequence);
  });
  const auto first = sampler.sample_now();
  const auto second = sampler.sample_now();
  // Each hook once per sample: before publication the store still holds the previous sample.
  EXPECT_EQ(published_before, (std::vector<std::uint64_t>{0, first->sequence}));
  EXPECT_EQ(published_after, (std::vector<std::uint64_t>{first->sequence, second->sequence}));
}

TEST(Sampler, PartlyDegradedSourceIsLoggedOncePerChange) {
  std::ostringstream log;
  auto previous = spdlog::default_logger();
  auto logger = std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::ostream_sink_mt>(log));
  // "\n" line ends on Windows too (spdlog's default there is "\r\n").
  logger->set_formatter(std::make_unique<spdlog::pattern_formatter>("%l %v", spdlog::pattern_time_type::local, "\n"));
  spdlog::set_default_logger(logger);

  SnapshotStore store(10);
  auto source = std::make_unique<ScriptedSource>("cgroup", true);
  ScriptedSource* raw = source.get();
  std::vector<std::unique_ptr<Source>> sources;
  sources.push_back(std::move(source));
  Sampler sampler(store, std::move(sources), std::chrono::milliseconds(1000));
  sampler.sample_now();
  raw->degraded_text = "unparsable: /a/memory.stat";
  sampler.sample_now();
  sampler.sample_now();
  raw->degraded_text = "unparsable: /b/memory.stat";  // another reason right after: not logged again
  sampler.sample_now();
  raw->degraded_text = "";
  sampler.sample_now();
  sampler.sample_now();
  raw->degraded_text = "unparsable: /c/memory.stat";
  sampler.sample_now();
  spdlog::set_default_logger(previous);

  EXPECT_EQ(log.str(),
            "warning source cgroup is partly degraded: unparsable: /a/memory.stat\n"
            "info source cgroup is complete again\n"
            "warning source cgroup is partly degraded: unparsable: /c/memory.stat\n");
}

TEST(Sampler, ThreadSamplesAtTheIntervalAndStops) {
  SnapshotStore store(100);
  auto source = std::make_unique<ScriptedSource>("s", true);
  ScriptedSource* raw = source.get();
  std::vector<std::unique_ptr<Source>> sources;
  sources.push_back(std::move(source));
  Sampler sampler(store, std::move(sources), std::chrono::milliseconds(100));
  const auto started = std::chrono::steady_clock::now();
  sampler.start();
  ASSERT_TRUE(wait_until([&] { return raw->calls.load() >= 4; })) << raw->calls.load() << " samples";
  const auto fourth = std::chrono::steady_clock::now();
  EXPECT_TRUE(sampler.healthy());
  ASSERT_TRUE(sampler.stop(std::chrono::milliseconds(2000)));
  // Paced by the interval: the first sample at start, the fourth no sooner than 3 intervals
  // later (a loaded machine only makes it later, so no upper bound is asserted).
  EXPECT_GE(fourth - started, std::chrono::milliseconds(300));
  EXPECT_EQ(store.latest()->sequence, static_cast<std::uint64_t>(raw->calls.load()));
}

TEST(Sampler, ReconfigureSwapsSourcesAndInterval) {
  SnapshotStore store(100);
  std::vector<std::unique_ptr<Source>> first;
  first.push_back(std::make_unique<ScriptedSource>("first", true));
  Sampler sampler(store, std::move(first), std::chrono::milliseconds(1000));
  sampler.start();
  std::vector<Sampler::SourcePlan> second;
  second.push_back({std::make_unique<ScriptedSource>("second", true), false});
  sampler.reconfigure(std::move(second), std::chrono::milliseconds(100));
  ASSERT_TRUE(wait_until([&] {
    SnapshotPtr latest = store.latest();
    return latest != nullptr && latest->sources.at(0).name == "second";
  }));
  ASSERT_TRUE(sampler.stop(std::chrono::milliseconds(2000)));
  EXPECT_EQ(sampler.interval(), std::chrono::milliseconds(100));
  EXPECT_EQ(store.latest()->sources.at(0).name, "second");
}

// A reload keeps the running instance of a source whose settings did not change (its counters
// and state carry on), replaces the others, and two reloads within one tick are judged against
// what the first would have installed.
TEST(Sampler, ReconfigureKeepsUnchangedSourcesRunning) {
  SnapshotStore store(100);
  auto kept = std::make_unique<ScriptedSource>("kept", true);
  ScriptedSource* kept_raw = kept.get();
  auto replaced = std::make_unique<ScriptedSource>("replaced", true);
  ScriptedSource* replaced_raw = replaced.get();
  std::vector<std::unique_ptr<Source>> first;
  first.push_back(std::move(kept));
  first.push_back(std::move(replaced));
  Sampler sampler(store, std::move(first), std::chrono::milliseconds(1000));
  sampler.sample_now();
  const int kept_calls = kept_raw->calls.load();
  ASSERT_EQ(replaced_raw->calls.load(), 1);

  std::atomic<int> unused_calls{0}, fresh_calls{0};
  auto kept_again = std::make_unique<ScriptedSource>("kept", true);
  kept_again->also_count = &unused_calls;  // destroyed when the plan is applied
  auto fresh = std::make_unique<ScriptedSource>("replaced", true);
  fresh->also_count = &fresh_calls;
  std::vector<Sampler::SourcePlan> plan;
  plan.push_back({std::move(kept_again), true});
  plan.push_back({std::move(fresh), false});
  sampler.reconfigure(std::move(plan), std::chrono::milliseconds(1000));
  sampler.start();  // applies the plan, then samples
  ASSERT_TRUE(wait_until([&] { return kept_raw->calls.load() > kept_calls && fresh_calls.load() >= 1; }));
  ASSERT_TRUE(sampler.stop(std::chrono::milliseconds(2000)));
  EXPECT_GT(kept_raw->calls.load(), kept_calls) << "the running instance goes on";
  EXPECT_EQ(unused_calls.load(), 0) << "the instance built for the plan is not used";
  EXPECT_GE(fresh_calls.load(), 1) << "a changed source is replaced";
  ASSERT_EQ(store.latest()->sources.size(), 2u);
  EXPECT_EQ(store.latest()->sources.at(0).name, "kept");
  EXPECT_EQ(store.latest()->sources.at(1).name, "replaced");
}

TEST(Sampler, TwoReloadsInOneTickReplaceWhatTheFirstWouldHaveReplaced) {
  SnapshotStore store(100);
  std::vector<std::unique_ptr<Source>> first;
  first.push_back(std::make_unique<ScriptedSource>("s", true));
  Sampler sampler(store, std::move(first), std::chrono::milliseconds(1000));
  // Reload 1 changes s's settings; reload 2, before the sampler applied reload 1, finds them
  // equal to reload 1's and asks to keep "the running one", which must not be the old one.
  std::vector<Sampler::SourcePlan> changed;
  changed.push_back({std::make_unique<ScriptedSource>("s", true), false});
  sampler.reconfigure(std::move(changed), std::chrono::milliseconds(1000));
  std::atomic<int> second_calls{0};
  auto second = std::make_unique<ScriptedSource>("s", true);
  second->also_count = &second_calls;
  std::vector<Sampler::SourcePlan> unchanged;
  unchanged.push_back({std::move(second), true});
  sampler.reconfigure(std::move(unchanged), std::chrono::milliseconds(1000));
  sampler.start();
  ASSERT_TRUE(wait_until([&] { return store.latest() != nullptr; }));
  ASSERT_TRUE(sampler.stop(std::chrono::milliseconds(2000)));
  EXPECT_GE(second_calls.load(), 1) << "the old instance was to be replaced: a new one runs";
}

}  // namespace
}  // namespace memdiag
