// SPDX-License-Identifier: Apache-2.0
#include "exporters/prometheus/snapshot_collector.hpp"

#include <set>

#include "exporters/prometheus/canary_metrics.hpp"
#include "exporters/prometheus/cgroup_metrics.hpp"
#include "exporters/prometheus/overcommit_metrics.hpp"
#include "exporters/prometheus/pressure_metrics.hpp"
#include "exporters/prometheus/breaking_metrics.hpp"
#include "exporters/prometheus/stall_metrics.hpp"
#include "exporters/prometheus/process_metrics.hpp"
#include "exporters/prometheus/reclaim_stall_metrics.hpp"
#include "exporters/prometheus/system_memory_metrics.hpp"
#include "exporters/prometheus/metric_names.hpp"

namespace memdiag::prom {
namespace {

using prometheus::MetricType;

double seconds_since_epoch(std::chrono::system_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

void render_sources(const Snapshot& snap, MetricSink& sink) {
  sink.family("memdiag_source_up",
              "Whether the source's last sample succeeded (1) or failed or is unsupported here (0).",
              MetricType::Gauge);
  for (const auto& s : snap.sources) sink.sample({{"source", s.name}}, s.up ? 1 : 0);
  sink.family("memdiag_source_duration_seconds", "Wall time the source's last sample took.", MetricType::Gauge);
  for (const auto& s : snap.sources) sink.sample({{"source", s.name}}, s.duration_seconds);
}

void render_pressure(const PressureSection& psi, MetricSink& sink) {
  auto each_line = [&psi](auto&& emit) {
    for (std::size_t r = 0; r < psi.resources.size(); ++r) {
      if (!psi.resources[r]) continue;
      emit(kPsiResourceNames[r], std::string_view("some"), psi.resources[r]->some);
      if (psi.resources[r]->full) emit(kPsiResourceNames[r], std::string_view("full"), *psi.resources[r]->full);
    }
  };
  sink.family("memdiag_pressure_stall_seconds_total",
              "Cumulative time tasks stalled on the resource (PSI total): some = at least one task, "
              "full = all non-idle tasks at once.",
              MetricType::Counter);
  each_line([&sink](std::string_view resource, std::string_view kind, const PsiLine& line) {
    sink.sample({{"resource", resource}, {"kind", kind}}, static_cast<double>(line.total_us) / 1e6);
  });
  sink.family("memdiag_pressure_ratio",
              "Share of wall time stalled over the PSI averaging window (PSI avg, as a ratio).", MetricType::Gauge);
  each_line([&sink](std::string_view resource, std::string_view kind, const PsiLine& line) {
    sink.sample({{"resource", resource}, {"kind", kind}, {"window", "10s"}}, line.avg10);
    sink.sample({{"resource", resource}, {"kind", kind}, {"window", "60s"}}, line.avg60);
    sink.sample({{"resource", resource}, {"kind", kind}, {"window", "300s"}}, line.avg300);
  });
}

void render_vm_sysctl(const VmSysctlSection& sysctls, MetricSink& sink) {
  sink.family("memdiag_vm_sysctl",
              "Value of /proc/sys/vm/<name>: the knobs that decide overcommit, reclaim and limits.",
              MetricType::Gauge);
  for (const auto& v : sysctls.values) sink.sample({{"name", v.name}}, v.value);
}

}  // namespace

SnapshotCollector::SnapshotCollector(const SnapshotStore& store, BuildInfo build)
    : store_(store), build_(std::move(build)) {}

std::vector<prometheus::MetricFamily> SnapshotCollector::Collect() const {
  const SnapshotPtr snap = store_.latest();
  FamilySink sink;
  render(snap.get(), sink);
  return sink.take();
}

void SnapshotCollector::render_text(std::string& out) const {
  const SnapshotPtr snap = store_.latest();
  out.reserve(out.size() + last_text_size_.load(std::memory_order_relaxed) + 4096);
  const std::size_t before = out.size();
  TextSink sink(out);
  render(snap.get(), sink);
  last_text_size_.store(out.size() - before, std::memory_order_relaxed);
}

std::shared_ptr<const std::string> SnapshotCollector::shared_text() const {
  const SnapshotPtr snap = store_.latest();
  std::lock_guard lock(text_mutex_);
  if (text_ && text_of_ == snap) return text_;
  auto text = std::make_shared<std::string>();
  text->reserve(last_text_size_.load(std::memory_order_relaxed) + 4096);
  TextSink sink(*text);
  render(snap.get(), sink);
  last_text_size_.store(text->size(), std::memory_order_relaxed);
  // Kept while any scrape of this snapshot is in flight: no room left over from the hint.
  if (text->capacity() > text->size() + text->size() / 8 + 4096) text->shrink_to_fit();
  text_of_ = snap;
  text_ = std::move(text);
  return text_;
}

void SnapshotCollector::set_posture(std::shared_ptr<const DaemonPosture> posture) {
  std::lock_guard lock(posture_mutex_);
  posture_ = std::move(posture);
}

void SnapshotCollector::render_posture(MetricSink& sink) const {
  std::shared_ptr<const DaemonPosture> posture;
  {
    std::lock_guard lock(posture_mutex_);
    posture = posture_;
  }
  if (!posture) return;
  sink.family("memdiag_daemon_memory_locked", "1 when memdiagd's memory is locked resident (daemon.lock_memory).",
              MetricType::Gauge);
  sink.sample({}, posture->memory_locked ? 1 : 0);
  if (posture->locked_bytes) {
    sink.family("memdiag_daemon_memory_locked_bytes", "memdiagd's resident memory that is locked (smaps_rollup Locked).",
                MetricType::Gauge);
    sink.sample({}, static_cast<double>(*posture->locked_bytes));
  }
  if (!posture->capabilities.empty()) {
    sink.family("memdiag_daemon_capability", "A Linux capability memdiagd holds now (effective set; 1 each).",
                MetricType::Gauge);
    for (const std::string& capability : posture->capabilities) sink.sample({{"capability", capability}}, 1);
  }
  if (posture->uid) {
    sink.family("memdiag_daemon_uid", "The user id memdiagd runs as.", MetricType::Gauge);
    sink.sample({}, static_cast<double>(*posture->uid));
  }
  if (const auto& self = posture->process) {
    // The names and meanings every Prometheus client library gives its own process.
    sink.family("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", MetricType::Counter);
    sink.sample({}, self->cpu_seconds);
    sink.family("process_resident_memory_bytes", "Resident memory size in bytes.", MetricType::Gauge);
    sink.sample({}, static_cast<double>(self->resident_bytes));
    sink.family("process_virtual_memory_bytes", "Virtual memory size in bytes.", MetricType::Gauge);
    sink.sample({}, static_cast<double>(self->virtual_bytes));
    sink.family("process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
                MetricType::Gauge);
    sink.sample({}, self->start_time_seconds);
    if (self->open_fds) {
      sink.family("process_open_fds", "Number of open file descriptors.", MetricType::Gauge);
      sink.sample({}, static_cast<double>(*self->open_fds));
    }
    if (self->max_fds) {
      sink.family("process_max_fds", "Maximum number of open file descriptors.", MetricType::Gauge);
      sink.sample({}, static_cast<double>(*self->max_fds));
    }
  }
}

void SnapshotCollector::render(const Snapshot* snap, MetricSink& sink) const {
  sink.family("memdiag_build_info", "Build of the running memdiagd (always 1).", MetricType::Gauge);
  sink.sample({{"version", build_.version}, {"revision", build_.revision}, {"compiler", build_.compiler}}, 1);
  render_posture(sink);
  if (snap == nullptr) return;  // before the first sample

  sink.family("memdiag_sampler_samples_total", "Samples the sampler has taken since start.", MetricType::Counter);
  sink.sample({}, static_cast<double>(snap->sequence));
  sink.family("memdiag_sampler_last_sample_timestamp_seconds", "Unix time of the snapshot being served.",
              MetricType::Gauge);
  sink.sample({}, seconds_since_epoch(snap->taken_at));

  render_sources(*snap, sink);
  if (snap->system_memory) render_system_memory(*snap->system_memory, sink);
  if (snap->windows_memory) render_windows_memory(*snap->windows_memory, sink);
  if (snap->windows_paging) render_windows_paging(*snap->windows_paging, sink);
  // The process source renders Linux's richer per-process series itself.
  if (snap->process_memory && !snap->processes) render_process_memory(*snap->process_memory, sink);
  if (snap->meminfo) render_table(Table::kMeminfo, *snap->meminfo, sink);
  if (snap->vmstat) render_table(Table::kVmstat, *snap->vmstat, sink);
  if (snap->pressure) render_pressure(*snap->pressure, sink);
  if (snap->vm_sysctl) render_vm_sysctl(*snap->vm_sysctl, sink);
  if (snap->cgroups) render_cgroups(*snap->cgroups, snap->derived, sink);
  if (snap->reclaim_stall) render_reclaim_stall(*snap->reclaim_stall, sink);
  if (snap->processes) render_processes(*snap->processes, sink);
  if (snap->canary) render_canary(*snap->canary, sink);
  if (snap->derived.overcommit) render_overcommit(*snap->derived.overcommit, sink);
  if (snap->derived.stall) render_stall(*snap->derived.stall, sink);
  if (snap->derived.breaking) render_breaking(*snap->derived.breaking, sink);
  render_pressure_scopes(*snap, sink);
}

std::shared_ptr<const SnapshotCollector::RenderedSchema> SnapshotCollector::rendered(
    Table table, const std::shared_ptr<const FieldSchema>& schema) const {
  std::lock_guard lock(cache_mutex_);
  auto& cache = table == Table::kMeminfo ? meminfo_cache_ : vmstat_cache_;
  if (cache && cache->schema == schema) return cache;

  auto fresh = std::make_shared<RenderedSchema>();
  fresh->schema = schema;
  std::set<std::string> taken;
  for (std::size_t i = 0; i < schema->size(); ++i) {
    const std::string& field = schema->names[i];
    const FieldKind kind = schema->kinds[i];
    std::string name;
    std::string help;
    if (table == Table::kMeminfo) {
      name = meminfo_metric_name(field, kind);
      help = "/proc/meminfo " + field + (kind == FieldKind::kBytes ? " (kB in the file), in bytes." : ", in pages.");
    } else {
      name = vmstat_metric_name(field, kind);
      help = "/proc/vmstat " + field + (kind == FieldKind::kCounter ? " (event counter)." : " (current level).");
    }
    // Two kernel spellings folding into one metric name would break the exposition; keep the first.
    if (!taken.insert(name).second) name.clear();
    fresh->names.push_back(std::move(name));
    fresh->helps.push_back(std::move(help));
  }
  cache = fresh;
  return fresh;
}

void SnapshotCollector::render_table(Table table, const FieldTable& fields, MetricSink& sink) const {
  const auto names = rendered(table, fields.schema);
  for (std::size_t i = 0; i < fields.values.size(); ++i) {
    if (names->names[i].empty()) continue;
    const MetricType type = fields.schema->kinds[i] == FieldKind::kCounter ? MetricType::Counter : MetricType::Gauge;
    sink.family(names->names[i], names->helps[i], type);
    sink.sample({}, static_cast<double>(fields.values[i]));
  }
}

}  // namespace memdiag::prom
