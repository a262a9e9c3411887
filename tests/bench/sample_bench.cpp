// SPDX-License-Identifier: Apache-2.0
// What a sample and a render cost, against the real /proc of this machine.
//
//   FullSample              every node source sampling into a fresh Snapshot, back to back
//                           (target: < 100 us CPU)
//   FullSample/after_sleep  the same with 10 ms of sleep before each sample, as the sampler
//                           thread runs: caches are cold, so this is what a sample costs in situ
//   Source/<name>           one source alone, to see which one dominates
//   Parse/<file>            the pure parser on text read once: the user-space share
//   Floor/...               bare C reads of the same kernel files, no parsing: the floor
//   Collect, Serialize,     SnapshotCollector over one real snapshot, prometheus-cpp's text
//   Render                  serializer, and both (render_exposition: what /metrics runs)
//   RenderFloor             the same exposition from cached text plus std::to_chars: what
//                           rendering could cost at least
//
// All report process CPU time per iteration (reads of /proc are mostly system time, which
// counts). After the table a summary sets the full sample against the floors.
#include <array>
#include <benchmark/benchmark.h>

#include "tests/bench/exposition_samples.hpp"
#include "tests/bench/recording_reporter.hpp"
#include <fcntl.h>
#include <prometheus/text_serializer.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "exporters/prometheus/exposition.hpp"
#include "exporters/prometheus/snapshot_collector.hpp"
#include "probes/core/snapshot_store.hpp"
#include "probes/catalog/source_catalog.hpp"
#include "probes/linux/node/vm_sysctl_registration.hpp"
#include "probes/linux/node/meminfo_parser.hpp"
#include "probes/linux/node/pressure_parser.hpp"
#include "probes/linux/node/vm_sysctl_source.hpp"
#include "probes/linux/node/vmstat_parser.hpp"

namespace {

using memdiag::bench::count_samples;
using memdiag::bench::RecordingReporter;

using memdiag::KernelPaths;
using memdiag::Snapshot;
using memdiag::Source;

// --- Sampling: the sources as the daemon holds them, constructed and probed once. ---

// The daemon's default sources.vm_sysctl.refresh_interval (daemon/config.hpp).
constexpr std::chrono::milliseconds kDefaultSysctlRefresh{10000};
constexpr std::array<std::string_view, 4> kNodeSources = {"meminfo", "vmstat", "pressure", "vm_sysctl"};

// `sysctl_refresh` as in the config: the daemon's default (10 s) makes the vm_sysctl source
// serve its last values on most samples; 0 reads all 25 sysctl files every sample.
std::vector<std::unique_ptr<Source>> make_sources(std::chrono::milliseconds sysctl_refresh) {
  std::vector<std::unique_ptr<Source>> sources;
  // Not the cgroup source: its cost is per cgroup (memdiag-cgroup-bench measures it).
  for (std::string_view name : kNodeSources) {
    auto source = name == "vm_sysctl"
                      ? memdiag::make_source(name, KernelPaths{}, memdiag::VmSysctlOptions{sysctl_refresh})
                      : memdiag::make_source(name, KernelPaths{});
    if (source && source->probe()) sources.push_back(std::move(source));
  }
  return sources;
}

bool sample_all(std::vector<std::unique_ptr<Source>>& sources, Snapshot& snap) {
  bool ok = true;
  for (auto& s : sources) ok = s->sample(snap).ok() && ok;
  return ok;
}

void BM_FullSample(benchmark::State& state, bool sleep_first, std::chrono::milliseconds sysctl_refresh) {
  auto sources = make_sources(sysctl_refresh);
  for (auto _ : state) {
    if (sleep_first) {
      state.PauseTiming();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      state.ResumeTiming();
    }
    Snapshot snap;
    if (!sample_all(sources, snap)) {
      state.SkipWithError("a source failed to sample");
      break;
    }
    benchmark::DoNotOptimize(snap);
  }
  state.counters["sources"] = static_cast<double>(sources.size());
}

void BM_Source(benchmark::State& state, std::string name) {
  auto source = memdiag::make_source(name, KernelPaths{});
  if (!source || !source->probe()) {
    state.SkipWithError(("source unsupported here: " + name).c_str());
    return;
  }
  for (auto _ : state) {
    Snapshot snap;
    if (!source->sample(snap)) {
      state.SkipWithError(("source failed: " + name).c_str());
      break;
    }
    benchmark::DoNotOptimize(snap);
  }
}

std::string slurp(const char* path) {
  std::string text;
  if (std::FILE* f = std::fopen(path, "re")) {
    char chunk[4096];
    for (std::size_t n; (n = std::fread(chunk, 1, sizeof chunk, f)) > 0;) text.append(chunk, n);
    std::fclose(f);
  }
  return text;
}

template <class Entry, class Parse>
void BM_ParseTable(benchmark::State& state, const char* path, Parse parse) {
  const std::string text = slurp(path);
  std::vector<Entry> entries;
  for (auto _ : state) {
    if (!parse(text, entries)) {
      state.SkipWithError("parse failed");
      break;
    }
    benchmark::DoNotOptimize(entries.data());
  }
  state.counters["fields"] = static_cast<double>(entries.size());
}

void BM_ParsePressure(benchmark::State& state) {
  const std::string text = slurp("/proc/pressure/memory");
  for (auto _ : state) {
    auto parsed = memdiag::parse_pressure(text);
    if (!parsed) {
      state.SkipWithError("parse failed");
      break;
    }
    benchmark::DoNotOptimize(parsed);
  }
}

// --- The floor: the kernel's own cost of producing the text, read in plain C. ---

const std::vector<std::string>& node_files() {  // what the ~52 us floor of a quiet machine reads
  static const std::vector<std::string> kFiles = {"/proc/meminfo", "/proc/vmstat", "/proc/pressure/memory",
                                                  "/proc/pressure/io", "/proc/pressure/cpu"};
  return kFiles;
}

const std::vector<std::string>& all_source_files() {  // every file a full sample reads
  static const std::vector<std::string> kFiles = [] {
    std::vector<std::string> files = node_files();
    for (std::string_view name : memdiag::VmSysctlSource::known_sysctls()) {
      std::string path = "/proc/sys/vm/" + std::string(name);
      if (::access(path.c_str(), R_OK) == 0) files.push_back(std::move(path));
    }
    return files;
  }();
  return kFiles;
}

// 4 KiB like the sources' buffers. The size matters: /proc/sys allocates and zeroes a kernel
// buffer as large as the read asks for, so 64 KiB reads of a sysctl cost ~5 us instead of ~1.
char g_buffer[4096];

// Reads from offset 0 until end of file, as any correct reader must. Returns bytes read.
long read_to_end(int fd) {
  long total = 0;
  for (;;) {
    const ssize_t n = ::pread(fd, g_buffer, sizeof g_buffer, total);
    if (n <= 0) return n < 0 ? -1 : total;
    total += n;
  }
}

void BM_FloorOpenReadClose(benchmark::State& state, const std::vector<std::string>* files) {
  long bytes = 0;
  for (auto _ : state) {
    bytes = 0;
    for (const auto& path : *files) {
      const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      bytes += read_to_end(fd);
      ::close(fd);
    }
    benchmark::DoNotOptimize(bytes);
  }
  state.counters["files"] = static_cast<double>(files->size());
  state.counters["bytes"] = static_cast<double>(bytes);
}

void BM_FloorPreadKeptOpen(benchmark::State& state, const std::vector<std::string>* files) {
  std::vector<int> fds;
  for (const auto& path : *files) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) fds.push_back(fd);
  }
  long bytes = 0;
  for (auto _ : state) {
    bytes = 0;
    for (int fd : fds) bytes += read_to_end(fd);
    benchmark::DoNotOptimize(bytes);
  }
  for (int fd : fds) ::close(fd);
  state.counters["files"] = static_cast<double>(fds.size());
  state.counters["bytes"] = static_cast<double>(bytes);
}

// --- Rendering: what a scrape costs before HTTP. ---

struct RenderFixture {
  memdiag::SnapshotStore store{1};
  memdiag::prom::SnapshotCollector collector{store, {"bench", "bench", "bench"}};

  RenderFixture() {
    auto sources = make_sources(kDefaultSysctlRefresh);
    auto snap = std::make_shared<Snapshot>();
    snap->sequence = 1;
    snap->taken_at = std::chrono::system_clock::now();
    for (auto& s : sources) {
      memdiag::SourceStatus status;
      status.name = std::string(s->name());
      status.up = s->sample(*snap).ok();
      snap->sources.push_back(std::move(status));
    }
    store.publish(std::move(snap));
  }
};

void BM_Collect(benchmark::State& state) {
  RenderFixture fixture;
  std::size_t families = 0;
  for (auto _ : state) {
    auto out = fixture.collector.Collect();
    families = out.size();
    benchmark::DoNotOptimize(out);
  }
  state.counters["families"] = static_cast<double>(families);
}

void BM_Serialize(benchmark::State& state) {
  RenderFixture fixture;
  const auto families = fixture.collector.Collect();
  const prometheus::TextSerializer serializer;
  for (auto _ : state) {
    std::ostringstream out;
    serializer.Serialize(out, families);
    benchmark::DoNotOptimize(out);
  }
}

void BM_Render(benchmark::State& state) {
  RenderFixture fixture;
  std::string body;
  for (auto _ : state) {
    body = memdiag::prom::render_exposition(fixture.collector);
    benchmark::DoNotOptimize(body);
  }
  state.counters["bytes"] = static_cast<double>(body.size());
  state.counters["samples"] = static_cast<double>(count_samples(body));
}

// What /metrics runs: the collector writing the text exposition straight into one string.
void BM_RenderText(benchmark::State& state) {
  RenderFixture fixture;
  std::string body;
  for (auto _ : state) {
    body.clear();
    fixture.collector.render_text(body);
    benchmark::DoNotOptimize(body);
  }
  state.counters["bytes"] = static_cast<double>(body.size());
  state.counters["samples"] = static_cast<double>(count_samples(body));
}

// The exposition as text that only changes with the kernel's field set (HELP, TYPE, name and
// labels, cached once) plus one number per sample formatted with std::to_chars. Not a
// renderer: a lower bound for one, built from render_exposition's own output.
void BM_RenderFloor(benchmark::State& state) {
  RenderFixture fixture;
  const std::string reference = memdiag::prom::render_exposition(fixture.collector);
  struct Item {
    std::string text_before;  // comment lines, then "name{labels} "
    double value;
  };
  std::vector<Item> items;
  std::string pending;
  std::string_view rest = reference;
  while (!rest.empty()) {
    const std::size_t nl = rest.find('\n');
    const std::string_view line = rest.substr(0, nl == std::string_view::npos ? rest.size() : nl + 1);
    rest.remove_prefix(line.size());
    if (line.front() == '#') {
      pending += line;
      continue;
    }
    const std::size_t space = line.rfind(' ');
    pending += line.substr(0, space + 1);
    items.push_back({std::move(pending), std::strtod(std::string(line.substr(space + 1)).c_str(), nullptr)});
    pending.clear();
  }
  std::string body;
  for (auto _ : state) {
    body.clear();
    body.reserve(reference.size() + 1024);
    for (const Item& item : items) {
      body += item.text_before;
      char number[32];
      const auto end = std::to_chars(number, number + sizeof number, item.value).ptr;
      body.append(number, end);
      body += '\n';
    }
    benchmark::DoNotOptimize(body);
  }
  state.counters["bytes"] = static_cast<double>(body.size());
  state.counters["samples"] = static_cast<double>(items.size());
}

// --- Registration and the summary. ---

constexpr const char* kFullSample = "FullSample";
constexpr const char* kFullSampleSysctls = "FullSample/sysctls_every_sample";
constexpr const char* kFullSampleCold = "FullSample/after_sleep";
constexpr const char* kFloorNode = "Floor/open_read_close/meminfo+vmstat+pressure";
constexpr const char* kFloorAll = "Floor/pread_kept_open/all_source_files";
constexpr double kFullSampleTargetUs = 100;

void register_benchmarks() {
  auto cpu = [](benchmark::internal::Benchmark* b) {
    return b->MeasureProcessCPUTime()->Unit(benchmark::kMicrosecond);
  };
  cpu(benchmark::RegisterBenchmark(kFullSample, BM_FullSample, false, kDefaultSysctlRefresh));
  cpu(benchmark::RegisterBenchmark(kFullSampleSysctls, BM_FullSample, false, std::chrono::milliseconds(0)));
  cpu(benchmark::RegisterBenchmark(kFullSampleCold, BM_FullSample, true, kDefaultSysctlRefresh))->Iterations(100);
  for (std::string_view name : {"meminfo", "vmstat", "pressure", "vm_sysctl", "cgroup"}) {
    const std::string n(name);
    cpu(benchmark::RegisterBenchmark(("Source/" + n).c_str(), BM_Source, n));
  }
  cpu(benchmark::RegisterBenchmark("Parse/meminfo", BM_ParseTable<memdiag::MeminfoEntry, decltype(&memdiag::parse_meminfo)>,
                                   "/proc/meminfo", &memdiag::parse_meminfo));
  cpu(benchmark::RegisterBenchmark("Parse/vmstat", BM_ParseTable<memdiag::VmstatEntry, decltype(&memdiag::parse_vmstat)>,
                                   "/proc/vmstat", &memdiag::parse_vmstat));
  cpu(benchmark::RegisterBenchmark("Parse/pressure_memory", BM_ParsePressure));
  cpu(benchmark::RegisterBenchmark(kFloorNode, BM_FloorOpenReadClose, &node_files()));
  cpu(benchmark::RegisterBenchmark("Floor/pread_kept_open/meminfo+vmstat+pressure", BM_FloorPreadKeptOpen,
                                   &node_files()));
  cpu(benchmark::RegisterBenchmark(kFloorAll, BM_FloorPreadKeptOpen, &all_source_files()));
  cpu(benchmark::RegisterBenchmark("Collect", BM_Collect));
  cpu(benchmark::RegisterBenchmark("Serialize", BM_Serialize));
  cpu(benchmark::RegisterBenchmark("Render", BM_Render));
  cpu(benchmark::RegisterBenchmark("RenderText", BM_RenderText));
  cpu(benchmark::RegisterBenchmark("RenderFloor", BM_RenderFloor));
}

void print_summary(const RecordingReporter& recorded, std::ostream& out) {
  auto line = [&out](const std::string& what, double us, const std::string& note) {
    if (us < 0) return;
    char text[200];
    std::snprintf(text, sizeof text, "  %-48s %8.1f us  %s\n", what.c_str(), us, note.c_str());
    out << text;
  };
  auto ratio = [](const char* label, double a, double b) {
    char text[96];
    std::snprintf(text, sizeof text, "%s = %.2f", label, a / b);
    return std::string(text);
  };
  out << "\nsummary (process CPU per iteration):\n";
  const double full = recorded.cpu_us(kFullSample);
  if (full > 0) {
    line("full sample of all node sources", full,
         std::string("target < 100 us: ") + (full < kFullSampleTargetUs ? "met" : "MISSED"));
    line(kFullSampleSysctls, recorded.cpu_us(kFullSampleSysctls), "(the one sample in 10 s that re-reads the sysctls)");
    line(kFullSampleCold, recorded.cpu_us(kFullSampleCold), "(cold caches, as in the daemon)");
    line(kFloorNode, recorded.cpu_us(kFloorNode), ratio("full sample / this floor", full, recorded.cpu_us(kFloorNode)));
    line(kFloorAll, recorded.cpu_us(kFloorAll), ratio("full sample / this floor", full, recorded.cpu_us(kFloorAll)));
  }
  const double render = recorded.cpu_us("RenderText");
  line("render of one /metrics exposition (RenderText)", render, "");
  if (render > 0) {
    line("Render (Collect + prometheus-cpp serializer)", recorded.cpu_us("Render"),
         ratio("Render / RenderText", recorded.cpu_us("Render"), render));
    line("RenderFloor", recorded.cpu_us("RenderFloor"), ratio("RenderText / RenderFloor", render, recorded.cpu_us("RenderFloor")));
  }
  out.flush();
}

}  // namespace

int main(int argc, char** argv) {
  // Keep machine-readable output clean: the summary goes to stderr unless the table is for people.
  bool console = true;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--benchmark_format=", 19) == 0 && std::strcmp(argv[i] + 19, "console") != 0) {
      console = false;
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  register_benchmarks();
  RecordingReporter reporter(benchmark::CreateDefaultDisplayReporter());
  benchmark::RunSpecifiedBenchmarks(&reporter);
  print_summary(reporter, console ? std::cout : std::cerr);
  benchmark::Shutdown();
  return 0;
}
