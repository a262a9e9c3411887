// SPDX-License-Identifier: Apache-2.0
// What the verdicts cost per sample (the diagnosis target: the models over a 300-snapshot ring
// under 1 ms CPU per sample), side by side with what the sample itself costs:
//
//   Sample/node_sources   the node sources (meminfo, vmstat, pressure, vm_sysctl) sampling into
//                         a fresh Snapshot: the reference the ratios are taken against
//   Verdict/stall         StallModel::assess on a snapshot with the 300 before it in the ring
//   Verdict/overcommit    derive_figures (the overcommit verdict and the cgroup limit figure)
//   Ring/recent           SnapshotStore::recent() of a full 300-snapshot ring, which the sampler
//                         hands the stall model every sample
//   Diagnosis/500_cgroups the whole per-sample diagnosis (DiagnosisModel::assess: the node's
//                         verdicts, 50 limited pods judged as scopes, contributors and victims
//                         among their 450 containers and 100 selected processes, the
//                         forecasts) on the same ring, whose last 15 snapshots carry the 500
//                         cgroups (the model's windows reach 10 s back; older snapshots it
//                         never reads for cgroups)
//   Report/json           the diagnosis report (/api/v1/diagnosis) of that snapshot, as JSON
//   Scrape/diagnosis_on   the /metrics text of that snapshot, and
//   Scrape/diagnosis_off  of the same snapshot without its derived figures: the ratio is what
//                         the diagnosis adds to a scrape (target: within 1.1x); the summary
//                         splits the bytes it adds into its own series and the detail series
//                         (memory.stat, PSI averages) of the cgroups it names
//   Record/snapshot       `memdiagd record`'s cost per sample: that snapshot (500 cgroups) as a
//                         recording frame after the one before it (bytes per frame counted)
//   Replay/snapshot       `diagnose --replay`'s per snapshot: the frame read back and assessed
//
// The ring is 300 real snapshots of this machine's /proc, taken back to back and stamped one
// second apart; the cgroups are made up (this machine has no 500 cgroups), shaped like a
// Kubernetes node's: every pod's PSI and limit events move, a third of the pods stall, one
// container in each grows. Process CPU time per iteration; a summary prints the ratios.
#include <benchmark/benchmark.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <set>
#include <cstring>
#include <iostream>
#include <memory>
#include <string_view>
#include <vector>

#include "exporters/prometheus/snapshot_collector.hpp"
#include "exporters/report/diagnosis_report.hpp"
#include "probes/analysis/derive_figures.hpp"
#include "probes/analysis/diagnosis_model.hpp"
#include "probes/analysis/diagnosis_replay.hpp"
#include "probes/analysis/stall_model.hpp"
#include "probes/catalog/source_catalog.hpp"
#include "probes/core/snapshot_store.hpp"
#include "probes/recording/recording_reader.hpp"
#include "probes/recording/recording_writer.hpp"
#include "tests/bench/recording_reporter.hpp"

namespace {

using memdiag::KernelPaths;
using memdiag::Snapshot;
using memdiag::SnapshotPtr;
using memdiag::Source;

constexpr std::size_t kRing = 300;
constexpr std::size_t kPods = 50, kContainersPerPod = 9;  // 500 cgroups
constexpr std::size_t kCgroupSnapshots = 15;
constexpr std::uint64_t kMiB = 1 << 20;

// The last scrape body rendered without (0) and with (1) the diagnosis.
std::array<std::string, 2>& scrape_bodies() {
  static std::array<std::string, 2> bodies;
  return bodies;
}

// The made-up pods and containers as sampled `second` seconds into the ring.
memdiag::CgroupSection cgroups_at(std::size_t second) {
  memdiag::CgroupSection section;
  section.mode = "v2";
  auto cgroup = [&](std::string path, bool leaf, std::uint64_t anon, std::uint64_t file, std::uint64_t psi_us) {
    memdiag::CgroupSample c;
    c.path = std::move(path);
    c.leaf = leaf;
    c.usage_bytes = anon + file;
    // Every memory.stat key the cgroup source exports on cgroup v2, as a real pod has them.
    c.stat = {{"anon", anon, false}, {"file", file, false}, {"inactive_file", file / 2, false}, {"shmem", 0, false},
              {"workingset_refault_file", second * 1000, true}, {"pgscan", second * 5000, true}};
    for (std::string_view k : {"kernel", "kernel_stack", "pagetables", "sock", "file_mapped", "file_dirty",
                               "file_writeback", "slab_reclaimable", "slab_unreclaimable"}) {
      c.stat.push_back({k, 1234567, false});
    }
    for (std::string_view k : {"workingset_refault_anon", "workingset_activate_anon", "workingset_activate_file",
                               "workingset_restore_anon", "workingset_restore_file", "pgsteal", "pgscan_direct",
                               "pgsteal_direct", "pgscan_kswapd", "pgsteal_kswapd", "pgfault", "pgmajfault"}) {
      c.stat.push_back({k, second * 777, true});
    }
    c.pressure = memdiag::PsiResource{};
    c.pressure->some.total_us = psi_us;
    c.pressure->full = memdiag::PsiLine{};
    c.pressure->full->total_us = psi_us / 4;
    c.events[static_cast<std::size_t>(memdiag::CgroupEvent::kHigh)] = 0;
    c.events[static_cast<std::size_t>(memdiag::CgroupEvent::kMax)] = second * 10;
    c.events[static_cast<std::size_t>(memdiag::CgroupEvent::kOomKill)] = 0;
    c.events[static_cast<std::size_t>(memdiag::CgroupEvent::kLow)] = 0;
    c.events[static_cast<std::size_t>(memdiag::CgroupEvent::kOom)] = 0;
    c.events[static_cast<std::size_t>(memdiag::CgroupEvent::kOomGroupKill)] = 0;
    return c;
  };
  for (std::size_t p = 0; p < kPods; ++p) {
    const bool stalling = p % 3 == 0;
    const std::uint64_t psi = stalling ? second * 400'000 : second * 1'000;  // 40 % or 0.1 %
    const std::string pod = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + std::to_string(p) + ".slice";
    memdiag::CgroupSample pod_sample = cgroup(pod, false, 900 * kMiB + second * kMiB, 600 * kMiB, psi);
    pod_sample.limited = true;
    pod_sample.limit_bytes = 2048 * kMiB;
    section.cgroups.push_back(std::move(pod_sample));
    for (std::size_t c = 0; c < kContainersPerPod; ++c) {
      const std::uint64_t growth = c == 0 ? second * kMiB : 0;
      section.cgroups.push_back(cgroup(pod + "/cri-containerd-" + std::to_string(c) + ".scope", true,
                                       100 * kMiB + growth, 60 * kMiB, stalling ? psi / 2 : 0));
    }
  }
  return section;
}

// The process source's selection as it would be on that node: 100 processes (more than the
// defaults select: top 10 by map count, 10 by resident memory, 10 by unbacked promise, the
// daemon), two in each of the first 50 containers; the first of each pod's grows.
memdiag::ProcessSection processes_at(std::size_t second, std::chrono::system_clock::time_point taken_at) {
  memdiag::ProcessSection section;
  section.scanned_at = taken_at;
  int pid = 1000;
  for (std::size_t p = 0; p < kPods; ++p) {
    const std::string pod = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + std::to_string(p) + ".slice";
    for (std::size_t i = 0; i < 2; ++i) {
      memdiag::SelectedProcess process;
      process.pid = pid++;
      process.comm = i == 0 ? "python3" : "sidecar";
      process.cgroup = pod + "/cri-containerd-" + std::to_string(i) + ".scope";
      process.rss_anon_bytes = (i == 0 ? 90 * kMiB + second * kMiB : 20 * kMiB);
      process.unbacked_promise_bytes = 64 * kMiB;
      section.unbacked_promise_bytes += process.unbacked_promise_bytes;
      section.selected.push_back(std::move(process));
    }
  }
  return section;
}

std::vector<std::unique_ptr<Source>> node_sources() {
  std::vector<std::unique_ptr<Source>> sources;
  for (std::string_view name : {"meminfo", "vmstat", "pressure", "vm_sysctl"}) {
    auto source = memdiag::make_source(name, KernelPaths{});
    if (source && source->probe()) sources.push_back(std::move(source));
  }
  return sources;
}

std::shared_ptr<Snapshot> sample(std::vector<std::unique_ptr<Source>>& sources) {
  auto snap = std::make_shared<Snapshot>();
  for (auto& s : sources) (void)s->sample(*snap);
  memdiag::analysis::derive_figures(*snap);
  return snap;
}

// 300 snapshots one second apart, and one more after them: what the model sees each sample.
struct Ring {
  std::vector<SnapshotPtr> before;
  std::shared_ptr<Snapshot> current;
};

const Ring& ring() {
  static const Ring built = [] {
    Ring r;
    auto sources = node_sources();
    const auto start = std::chrono::system_clock::now();
    for (std::size_t i = 0; i <= kRing; ++i) {
      auto snap = sample(sources);
      snap->taken_at = start + std::chrono::seconds(i);
      if (i + kCgroupSnapshots > kRing) {
        snap->cgroups = cgroups_at(i);
        snap->processes = processes_at(i, snap->taken_at);
      }
      if (i == kRing) {
        r.current = snap;
      } else {
        r.before.push_back(snap);
      }
    }
    return r;
  }();
  return built;
}

void BM_SampleNodeSources(benchmark::State& state) {
  auto sources = node_sources();
  for (auto _ : state) {
    Snapshot snap;
    for (auto& s : sources) (void)s->sample(snap);
    benchmark::DoNotOptimize(snap);
  }
}

void BM_StallVerdict(benchmark::State& state) {
  const Ring& r = ring();
  memdiag::analysis::StallModel model;
  // A second later each time, as samples come: the model's persistence keeps the last 10 s of
  // stall totals, and a timestamp that never moves would be read as a clock stepped back.
  Snapshot current = *r.current;
  for (auto _ : state) {
    current.taken_at += std::chrono::seconds(1);
    auto verdict = model.assess_instant(current, r.before);
    benchmark::DoNotOptimize(verdict);
  }
}

void BM_OvercommitVerdict(benchmark::State& state) {
  Snapshot snap = *ring().current;
  for (auto _ : state) {
    memdiag::analysis::derive_figures(snap);
    benchmark::DoNotOptimize(snap.derived);
  }
}

void BM_Diagnosis(benchmark::State& state) {
  const Ring& r = ring();
  memdiag::analysis::DiagnosisModel model;
  Snapshot current = *r.current;
  for (auto _ : state) {
    current.taken_at += std::chrono::milliseconds(10);  // within the windows' reach of the ring
    current.processes->scanned_at = current.taken_at;    // a new scan every sample: the dearest case
    auto transitions = model.assess(current, r.before);
    benchmark::DoNotOptimize(transitions);
  }
  state.counters["cgroup_scopes"] = static_cast<double>(current.derived.cgroup_scopes.size());
  std::size_t named = 0;
  std::size_t processes_named = 0;
  for (const auto& scope : current.derived.cgroup_scopes) {
    named += scope.analysis.members.size();
    processes_named += scope.analysis.processes.size();
  }
  state.counters["members_named"] = static_cast<double>(named);
  state.counters["processes_named"] = static_cast<double>(processes_named);
}

// The ring's current snapshot as the daemon publishes it: judged by the model.
const std::shared_ptr<const Snapshot>& judged() {
  static const std::shared_ptr<const Snapshot> built = [] {
    const Ring& r = ring();
    memdiag::analysis::DiagnosisModel model;
    auto current = std::make_shared<Snapshot>(*r.current);
    model.assess(*current, r.before);
    return std::shared_ptr<const Snapshot>(current);
  }();
  return built;
}

void BM_ReportJson(benchmark::State& state) {
  const Snapshot& snap = *judged();
  for (auto _ : state) {
    auto json = memdiag::report::render_diagnosis_json(snap, {});
    benchmark::DoNotOptimize(json);
  }
}

void BM_Scrape(benchmark::State& state, bool diagnosis) {
  auto snap = std::make_shared<Snapshot>(*judged());
  if (!diagnosis) snap->derived = {};
  memdiag::SnapshotStore store(1);
  store.publish(snap);
  memdiag::prom::SnapshotCollector collector(store, memdiag::prom::BuildInfo{"bench", "bench", "bench"});
  std::string body;
  for (auto _ : state) {
    body.clear();
    collector.render_text(body);
    benchmark::DoNotOptimize(body);
  }
  state.counters["bytes"] = static_cast<double>(body.size());
  scrape_bodies()[diagnosis ? 1 : 0] = body;
}

// What the diagnosis adds to a scrape, by bytes: its own families (levels, reasons, roles,
// shortfalls: absent from the scrape without it), and the detail series (memory.stat keys, PSI
// averages) of the cgroups it names, which the cgroup source gives only to the cgroups that
// matter now (exporters/prometheus/cgroup_detail.hpp).
struct ScrapeGrowth {
  std::size_t own_bytes = 0;
  std::size_t detail_bytes = 0;
};
ScrapeGrowth scrape_growth(const std::string& off, const std::string& on) {
  const auto family = [](std::string_view line) { return line.substr(0, line.find_first_of("{ ")); };
  std::set<std::string_view> families_off;
  for (std::string_view rest = off; !rest.empty();) {
    const std::string_view line = rest.substr(0, rest.find('\n'));
    rest.remove_prefix(std::min(rest.size(), line.size() + 1));
    if (!line.empty() && line[0] != '#') families_off.insert(family(line));
  }
  ScrapeGrowth g;
  for (std::string_view rest = on; !rest.empty();) {
    const std::string_view line = rest.substr(0, rest.find('\n'));
    rest.remove_prefix(std::min(rest.size(), line.size() + 1));
    if (!line.empty() && line[0] != '#' && !families_off.contains(family(line))) g.own_bytes += line.size() + 1;
  }
  const std::size_t added = on.size() > off.size() ? on.size() - off.size() : 0;
  g.detail_bytes = added > g.own_bytes ? added - g.own_bytes : 0;
  return g;
}

// Two consecutive snapshots with the 500 cgroups, the second a second after the first.
std::pair<const Snapshot*, const Snapshot*> last_two() {
  const Ring& r = ring();
  return {r.before.back().get(), r.current.get()};
}

void BM_RecordSnapshot(benchmark::State& state) {
  const auto [previous, current] = last_two();
  memdiag::recording::RecordingWriter writer;
  writer.begin({});
  std::size_t bytes = 0;
  for (auto _ : state) {
    // Alternating, so each frame is written after a different one, as a live recording's are.
    auto frame = writer.append(writer.snapshots() % 2 ? *previous : *current);
    bytes = frame.size();
    benchmark::DoNotOptimize(frame);
  }
  state.counters["bytes_per_frame"] = static_cast<double>(bytes);
}

void BM_ReplaySnapshot(benchmark::State& state) {
  const Snapshot* current = last_two().second;
  // A recording of the ring's cgroup snapshots, read back and assessed again and again.
  std::vector<const Snapshot*> frames;
  for (std::size_t i = ring().before.size() - kCgroupSnapshots + 1; i < ring().before.size(); ++i) {
    frames.push_back(ring().before[i].get());
  }
  frames.push_back(current);
  const std::string bytes = memdiag::recording::encode_recording({}, frames);
  std::size_t snapshots = 0;
  for (auto _ : state) {
    auto reader = memdiag::recording::RecordingReader::open(bytes);
    memdiag::analysis::DiagnosisReplay replay({}, kRing);
    for (;;) {
      auto next = reader->next();
      if (!next || !*next) break;
      replay.add(std::move(**next));
    }
    snapshots = reader->snapshots();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * snapshots));
  state.counters["snapshots"] = static_cast<double>(snapshots);
}

void BM_RingRecent(benchmark::State& state) {
  memdiag::SnapshotStore store(kRing);
  for (const SnapshotPtr& s : ring().before) store.publish(s);
  for (auto _ : state) {
    auto recent = store.recent();
    benchmark::DoNotOptimize(recent);
  }
}

std::string scrape_growth_summary() {
  const auto& bodies = scrape_bodies();
  if (bodies[0].empty() || bodies[1].empty()) return {};
  const ScrapeGrowth g = scrape_growth(bodies[0], bodies[1]);
  const double off = static_cast<double>(bodies[0].size());
  char out[512];
  std::snprintf(out, sizeof out,
                "\n  by bytes: without %.0f kB; the diagnosis' own series add %.0f kB (%.3fx), the detail series of "
                "the cgroups it names %.0f kB (%.3fx with both)",
                off / 1e3, static_cast<double>(g.own_bytes) / 1e3, (off + static_cast<double>(g.own_bytes)) / off,
                static_cast<double>(g.detail_bytes) / 1e3, static_cast<double>(bodies[1].size()) / off);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  auto cpu = [](benchmark::internal::Benchmark* b) { b->MeasureProcessCPUTime()->Unit(benchmark::kMicrosecond); };
  cpu(benchmark::RegisterBenchmark("Sample/node_sources", BM_SampleNodeSources));
  cpu(benchmark::RegisterBenchmark("Verdict/stall", BM_StallVerdict));
  cpu(benchmark::RegisterBenchmark("Verdict/overcommit", BM_OvercommitVerdict));
  cpu(benchmark::RegisterBenchmark("Ring/recent", BM_RingRecent));
  cpu(benchmark::RegisterBenchmark("Diagnosis/500_cgroups", BM_Diagnosis));
  cpu(benchmark::RegisterBenchmark("Report/json", BM_ReportJson));
  // Interleaved on and off, twice, so a noisy moment hits both alike.
  for (int round = 0; round < 2; ++round) {
    cpu(benchmark::RegisterBenchmark("Scrape/diagnosis_off", BM_Scrape, false));
    cpu(benchmark::RegisterBenchmark("Scrape/diagnosis_on", BM_Scrape, true));
  }
  cpu(benchmark::RegisterBenchmark("Record/snapshot", BM_RecordSnapshot));
  cpu(benchmark::RegisterBenchmark("Replay/recording", BM_ReplaySnapshot));
  memdiag::bench::RecordingReporter reporter(benchmark::CreateDefaultDisplayReporter());
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const double sample_us = reporter.cpu_us("Sample/node_sources");
  const double verdicts_us =
      reporter.cpu_us("Verdict/stall") + reporter.cpu_us("Verdict/overcommit") + reporter.cpu_us("Ring/recent");
  std::cout << "\nverdicts per sample (stall + overcommit + ring copy): " << verdicts_us << " us CPU (target < 1000 us)"
            << "\n  against a sample of the node sources: " << sample_us << " us, ratio " << verdicts_us / sample_us
            << "\ndiagnosis with 500 cgroups (50 scopes) per sample: " << reporter.cpu_us("Diagnosis/500_cgroups")
            << " us CPU (target < 1000 us)"
            << "\ndiagnosis report as JSON: " << reporter.cpu_us("Report/json") << " us CPU (target < 5000 us)"
            << "\nscrape with the diagnosis / without: " << reporter.cpu_us("Scrape/diagnosis_on") << " / "
            << reporter.cpu_us("Scrape/diagnosis_off") << " us, ratio "
            << reporter.cpu_us("Scrape/diagnosis_on") / reporter.cpu_us("Scrape/diagnosis_off") << " (target <= 1.1)"
            << scrape_growth_summary()
            << "\nrecording a snapshot with 500 cgroups: " << reporter.cpu_us("Record/snapshot")
            << " us CPU, against a sample of the node sources: ratio "
            << reporter.cpu_us("Record/snapshot") / sample_us << "\n";
  benchmark::Shutdown();
  return 0;
}
