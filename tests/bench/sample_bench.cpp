// What a sample and a render cost, against the real /proc of this machine.
//
//   FullSample            every node source sampling into a fresh Snapshot (what the sampler
//                         thread does once per interval); target < 100 us CPU
//   Source/<name>         one source alone, to see which one dominates
//   Floor/...             bare C reads of the same kernel files, no parsing: the floor
//   Collect, Render       SnapshotCollector over one real snapshot, then the text exposition
//                         (what every /metrics scrape costs before HTTP)
//
// All benchmarks report process CPU time per iteration (reads of /proc are mostly system
// time, which counts). After the table a summary prints the full sample against the floors.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "exporters/prometheus/exposition.hpp"
#include "exporters/prometheus/snapshot_collector.hpp"
#include "probes/core/snapshot_store.hpp"
#include "probes/linux/linux_sources.hpp"
#include "probes/linux/vm_sysctl_source.hpp"

namespace {

using memdiag::KernelPaths;
using memdiag::Snapshot;
using memdiag::Source;

// The sources as the daemon holds them: constructed and probed once, sampled many times.
std::vector<std::unique_ptr<Source>> make_sources() {
  std::vector<std::unique_ptr<Source>> sources;
  for (std::string_view name : memdiag::linux_source_names()) {
    auto source = memdiag::make_linux_source(name, KernelPaths{});
    if (source && source->probe()) sources.push_back(std::move(source));
  }
  return sources;
}

// Samples every source into `snap`; returns how many failed.
int sample_all(std::vector<std::unique_ptr<Source>>& sources, Snapshot& snap) {
  int failed = 0;
  for (auto& s : sources) failed += s->sample(snap).ok() ? 0 : 1;
  return failed;
}

void BM_FullSample(benchmark::State& state) {
  auto sources = make_sources();
  for (auto _ : state) {
    Snapshot snap;
    if (sample_all(sources, snap) != 0) {
      state.SkipWithError("a source failed to sample");
      break;
    }
    benchmark::DoNotOptimize(snap);
  }
  state.counters["sources"] = static_cast<double>(sources.size());
}

void BM_Source(benchmark::State& state, std::string name) {
  auto source = memdiag::make_linux_source(name, KernelPaths{});
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

// --- The floor: the kernel's own cost of producing the text, read in plain C. ---

const std::vector<std::string>& node_files() {  // what PLATFORM.md's ~52 us floor reads
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

char g_buffer[1 << 16];

// Reads from `offset` until end of file, as any correct reader must. Returns bytes read.
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
    auto sources = make_sources();
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

void BM_Render(benchmark::State& state) {
  RenderFixture fixture;
  std::string body;
  for (auto _ : state) {
    body = memdiag::prom::render_exposition(fixture.collector);
    benchmark::DoNotOptimize(body);
  }
  std::size_t samples = 0;  // lines that are not comments
  bool line_start = true;
  for (char c : body) {
    if (line_start && c != '#') ++samples;
    line_start = c == '\n';
  }
  state.counters["bytes"] = static_cast<double>(body.size());
  state.counters["samples"] = static_cast<double>(samples);
}

// --- Registration and the summary. ---

// Shows every run as usual and keeps each benchmark's CPU time per iteration (the median
// when repetitions are asked for) for the summary.
class RecordingReporter final : public benchmark::BenchmarkReporter {
 public:
  explicit RecordingReporter(benchmark::BenchmarkReporter* display) : display_(display) {}

  bool ReportContext(const Context& context) override { return display_->ReportContext(context); }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.error_occurred) continue;
      const bool single = run.run_type == Run::RT_Iteration && run.repetitions <= 1;
      const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
      if (!single && !median) continue;
      const std::string name = run.run_name.function_name;
      cpu_us_[name] = run.GetAdjustedCPUTime() * to_microseconds(run.time_unit);
    }
    display_->ReportRuns(runs);
  }
  void Finalize() override { display_->Finalize(); }

  // CPU microseconds per iteration, or a negative value if that benchmark did not run.
  double cpu_us(const std::string& name) const {
    auto it = cpu_us_.find(name);
    return it == cpu_us_.end() ? -1 : it->second;
  }

 private:
  static double to_microseconds(benchmark::TimeUnit unit) {
    switch (unit) {
      case benchmark::kNanosecond: return 1e-3;
      case benchmark::kMicrosecond: return 1;
      case benchmark::kMillisecond: return 1e3;
      case benchmark::kSecond: return 1e6;
    }
    return 1;
  }

  benchmark::BenchmarkReporter* display_;
  std::map<std::string, double> cpu_us_;
};

constexpr const char* kFullSample = "FullSample";
constexpr const char* kFloorNode = "Floor/open_read_close/meminfo+vmstat+pressure";
constexpr const char* kFloorAll = "Floor/pread_kept_open/all_source_files";
constexpr double kFullSampleTargetUs = 100;

void register_benchmarks() {
  auto common = [](benchmark::internal::Benchmark* b) { b->MeasureProcessCPUTime()->Unit(benchmark::kMicrosecond); };
  common(benchmark::RegisterBenchmark(kFullSample, BM_FullSample));
  for (std::string_view name : memdiag::linux_source_names()) {
    const std::string n(name);
    common(benchmark::RegisterBenchmark(("Source/" + n).c_str(), BM_Source, n));
  }
  common(benchmark::RegisterBenchmark(kFloorNode, BM_FloorOpenReadClose, &node_files()));
  common(benchmark::RegisterBenchmark("Floor/pread_kept_open/meminfo+vmstat+pressure", BM_FloorPreadKeptOpen,
                                      &node_files()));
  common(benchmark::RegisterBenchmark(kFloorAll, BM_FloorPreadKeptOpen, &all_source_files()));
  common(benchmark::RegisterBenchmark("Collect", BM_Collect));
  common(benchmark::RegisterBenchmark("Render", BM_Render));
}

void print_summary(const RecordingReporter& recorded, std::ostream& out) {
  auto line = [&out](const std::string& what, double us, const std::string& note) {
    char text[160];
    std::snprintf(text, sizeof text, "  %-48s %8.1f us  %s\n", what.c_str(), us, note.c_str());
    out << text;
  };
  out << "\nsummary (process CPU per iteration):\n";
  const double full = recorded.cpu_us(kFullSample);
  if (full > 0) {
    line("full sample of all node sources", full,
         std::string("target < 100 us: ") + (full < kFullSampleTargetUs ? "met" : "MISSED"));
    for (const char* floor : {kFloorNode, kFloorAll}) {
      const double f = recorded.cpu_us(floor);
      char ratio[64];
      std::snprintf(ratio, sizeof ratio, "full sample / this floor = %.2f", full / f);
      if (f > 0) line(floor, f, ratio);
    }
  }
  const double render = recorded.cpu_us("Render");
  if (render > 0) line("render of one /metrics exposition", render, "");
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
