// SPDX-License-Identifier: Apache-2.0
// What a SIGHUP keeps: from two configs through plan_sources to the sampler, the very object
// that sampled a source before the reload samples it after when its settings did not change,
// and a new one does when they did (or when its registration asks to be rebuilt). Identity,
// not a counter that could merely look continuous.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <thread>

#include "daemon/config.hpp"
#include "daemon/daemon.hpp"
#include "daemon/sampler.hpp"

namespace memdiag {
namespace {

using namespace std::chrono_literals;

const std::string kTree = MEMDIAG_SOURCE_DIR "/tests/fixtures/cgroup-v2";

// Heavy or privileged sources off; the node sources and the cgroup source (on the fixture tree)
// are enough to tell kept from rebuilt.
Config config_with(const std::string& cgroup_options, const std::string& interval) {
  const std::string text = "paths: {procfs: " + kTree + "/proc, sysfs: " + kTree +
                           "/sys}\n"
                           "sampler: {interval: " +
                           interval +
                           "}\n"
                           "sources:\n"
                           "  reclaim_stall: {enabled: false}\n"
                           "  processes: {enabled: false}\n"
                           "  canary: {enabled: false}\n"
                           "  cgroup: {" +
                           cgroup_options + "}\n";
  auto config = parse_config(text, "reload.yaml");
  EXPECT_TRUE(config) << (config ? "" : config.error().to_string());
  return config ? *config : Config{};
}

std::map<std::string, const Source*> by_name(const Sampler& sampler) {
  std::map<std::string, const Source*> sources;
  for (const Source* s : sampler.running_sources()) sources[std::string(s->name())] = s;
  return sources;
}

// Applies a reload the way the daemon does (the sampler thread swaps the plan in before its
// next sample) and returns the instances running afterwards.
std::map<std::string, const Source*> reload(Sampler& sampler, SnapshotStore& store, const Config& running,
                                            const Config& next) {
  const std::uint64_t before = store.latest() ? store.latest()->sequence : 0;
  sampler.reconfigure(plan_sources(running, next), next.interval);
  sampler.start();
  for (auto deadline = std::chrono::steady_clock::now() + 10s; std::chrono::steady_clock::now() < deadline;) {
    if (store.latest() && store.latest()->sequence > before) break;
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_TRUE(store.latest() && store.latest()->sequence > before) << "no sample after the reload";
  EXPECT_TRUE(sampler.stop(2s));
  return by_name(sampler);
}

TEST(Reload, UnchangedSourcesAreTheSameObjectsAndChangedOnesAreNew) {
  const Config first = config_with("max_cgroups: 10", "1s");
  SnapshotStore store(4);
  Sampler sampler(store, build_sources(first), first.interval);
  const auto was = by_name(sampler);
  for (const char* name : {"meminfo", "vmstat", "pressure", "vm_sysctl", "cgroup"}) {
    ASSERT_EQ(was.count(name), 1u) << name;
  }
  ASSERT_EQ(was.count("canary"), 0u);

  // The cgroup source's settings and the interval change; the node sources' do not.
  const Config second = config_with("max_cgroups: 20", "2s");
  const auto now = reload(sampler, store, first, second);
  ASSERT_EQ(now.size(), was.size());
  for (const char* name : {"meminfo", "vmstat", "pressure"}) {
    EXPECT_EQ(now.at(name), was.at(name)) << name << " was rebuilt though its settings did not change";
  }
  EXPECT_NE(now.at("cgroup"), was.at("cgroup")) << "a changed source runs anew";
  EXPECT_NE(now.at("vm_sysctl"), was.at("vm_sysctl")) << "vm_sysctl asks to be rebuilt on every reload";
  EXPECT_EQ(sampler.interval(), 2s);

  // A reload that changes nothing keeps the new cgroup instance too.
  const auto again = reload(sampler, store, second, second);
  for (const char* name : {"meminfo", "vmstat", "pressure", "cgroup"}) {
    EXPECT_EQ(again.at(name), now.at(name)) << name;
  }

  // Other paths: every source reads other files, so none is kept.
  Config moved = second;
  moved.paths.procfs = MEMDIAG_SOURCE_DIR "/tests/fixtures/kernel-6.18/proc";
  const auto after_move = reload(sampler, store, second, moved);
  for (const auto& [name, source] : after_move) EXPECT_NE(source, again.at(name)) << name;
}

}  // namespace
}  // namespace memdiag
