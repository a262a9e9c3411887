#include "exporters/prometheus/snapshot_collector.hpp"

#include <set>

#include "exporters/prometheus/metric_names.hpp"

namespace memdiag::prom {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

MetricFamily& add_family(std::vector<MetricFamily>& out, std::string name, std::string help, MetricType type) {
  MetricFamily& family = out.emplace_back();
  family.name = std::move(name);
  family.help = std::move(help);
  family.type = type;
  return family;
}

void add_sample(MetricFamily& family, double value, std::vector<ClientMetric::Label> labels = {}) {
  ClientMetric& metric = family.metric.emplace_back();
  metric.label = std::move(labels);
  if (family.type == MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
}

double seconds_since_epoch(std::chrono::system_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

void render_sources(const Snapshot& snap, std::vector<MetricFamily>& out) {
  auto& up = add_family(out, "memdiag_source_up",
                        "Whether the source's last sample succeeded (1) or failed or is unsupported here (0).",
                        MetricType::Gauge);
  for (const auto& s : snap.sources) add_sample(up, s.up ? 1 : 0, {{"source", s.name}});
  auto& duration = add_family(out, "memdiag_source_duration_seconds",
                              "Wall time the source's last sample took.", MetricType::Gauge);
  for (const auto& s : snap.sources) add_sample(duration, s.duration_seconds, {{"source", s.name}});
}

void render_pressure(const PressureSection& psi, std::vector<MetricFamily>& out) {
  auto& total = add_family(out, "memdiag_pressure_stall_seconds_total",
                           "Cumulative time tasks stalled on the resource (PSI total): some = at least one "
                           "task, full = all non-idle tasks at once.",
                           MetricType::Counter);
  auto& ratio = add_family(out, "memdiag_pressure_ratio",
                           "Share of wall time stalled over the PSI averaging window (PSI avg, as a ratio).",
                           MetricType::Gauge);
  for (std::size_t r = 0; r < psi.resources.size(); ++r) {
    if (!psi.resources[r]) continue;
    const std::string resource(kPsiResourceNames[r]);
    auto emit = [&](const PsiLine& line, const char* kind) {
      add_sample(total, static_cast<double>(line.total_us) / 1e6, {{"resource", resource}, {"kind", kind}});
      add_sample(ratio, line.avg10, {{"resource", resource}, {"kind", kind}, {"window", "10s"}});
      add_sample(ratio, line.avg60, {{"resource", resource}, {"kind", kind}, {"window", "60s"}});
      add_sample(ratio, line.avg300, {{"resource", resource}, {"kind", kind}, {"window", "300s"}});
    };
    emit(psi.resources[r]->some, "some");
    if (psi.resources[r]->full) emit(*psi.resources[r]->full, "full");
  }
}

void render_vm_sysctl(const VmSysctlSection& sysctls, std::vector<MetricFamily>& out) {
  auto& family = add_family(out, "memdiag_vm_sysctl",
                            "Value of /proc/sys/vm/<name>: the knobs that decide overcommit, reclaim and limits.",
                            MetricType::Gauge);
  for (const auto& v : sysctls.values) {
    add_sample(family, static_cast<double>(v.value), {{"name", std::string(v.name)}});
  }
}

}  // namespace

SnapshotCollector::SnapshotCollector(const SnapshotStore& store, BuildInfo build)
    : store_(store), build_(std::move(build)) {}

std::vector<MetricFamily> SnapshotCollector::Collect() const {
  const SnapshotPtr snap = store_.latest();
  return render(snap.get());
}

std::vector<MetricFamily> SnapshotCollector::render(const Snapshot* snap) const {
  std::vector<MetricFamily> out;
  out.reserve(320);
  auto& build = add_family(out, "memdiag_build_info", "Build of the running memdiagd (always 1).", MetricType::Gauge);
  add_sample(build, 1,
             {{"version", build_.version}, {"revision", build_.revision}, {"compiler", build_.compiler}});
  if (snap == nullptr) return out;  // before the first sample

  auto& samples = add_family(out, "memdiag_sampler_samples_total", "Samples the sampler has taken since start.",
                             MetricType::Counter);
  add_sample(samples, static_cast<double>(snap->sequence));
  auto& taken = add_family(out, "memdiag_sampler_last_sample_timestamp_seconds",
                           "Unix time of the snapshot being served.", MetricType::Gauge);
  add_sample(taken, seconds_since_epoch(snap->taken_at));

  render_sources(*snap, out);
  if (snap->meminfo) render_table(Table::kMeminfo, *snap->meminfo, out);
  if (snap->vmstat) render_table(Table::kVmstat, *snap->vmstat, out);
  if (snap->pressure) render_pressure(*snap->pressure, out);
  if (snap->vm_sysctl) render_vm_sysctl(*snap->vm_sysctl, out);
  return out;
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

void SnapshotCollector::render_table(Table table, const FieldTable& fields, std::vector<MetricFamily>& out) const {
  const auto names = rendered(table, fields.schema);
  for (std::size_t i = 0; i < fields.values.size(); ++i) {
    if (names->names[i].empty()) continue;
    const MetricType type = fields.schema->kinds[i] == FieldKind::kCounter ? MetricType::Counter : MetricType::Gauge;
    auto& family = add_family(out, names->names[i], names->helps[i], type);
    add_sample(family, static_cast<double>(fields.values[i]));
  }
}

}  // namespace memdiag::prom
