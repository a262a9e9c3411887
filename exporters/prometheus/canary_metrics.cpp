// SPDX-License-Identifier: Apache-2.0
#include "exporters/prometheus/canary_metrics.hpp"

#include "exporters/prometheus/log2_buckets.hpp"

namespace memdiag::prom {
namespace {

using prometheus::MetricType;

// The daemon's canary first, then the cgroup canaries, each labelled by its cgroup.
template <class Visit>
void each_canary(const CanarySection& section, Visit visit) {
  visit(section.node_cgroup, section.node, section.node_running);
  for (const auto& c : section.cgroups) visit(c.cgroup, c.reading, c.running);
}

void render_histograms(const CanarySection& section, MetricSink& sink) {
  Log2Cumulative cumulative{};
  sink.family("memdiag_canary_page_fault_seconds",
              "First touch of each page of the canary's freshly allocated working set: how long this node (or the "
              "cgroup, within its limit) takes to give a thread a page right now.",
              MetricType::Histogram);
  each_canary(section, [&](const std::string& cgroup, const CanaryReading& r, bool) {
    const LabelView labels[] = {{"cgroup", cgroup}};
    sink.histogram(labels, 1, log2_histogram_view(r.page_fault, cumulative));
  });
  sink.family("memdiag_canary_cycle_seconds",
              "One canary cycle: allocating the working set across size classes and touching every page.",
              MetricType::Histogram);
  each_canary(section, [&](const std::string& cgroup, const CanaryReading& r, bool) {
    const LabelView labels[] = {{"cgroup", cgroup}};
    sink.histogram(labels, 1, log2_histogram_view(r.cycle, cumulative));
  });
}

void render_counters(const CanarySection& section, MetricSink& sink) {
  struct Counter {
    const char* name;
    const char* help;
    MetricType type;
    double (*value)(const CanaryReading&, bool running);
  };
  static const Counter kCounters[] = {
      {"memdiag_canary_cycles_total", "Canary cycles completed.", MetricType::Counter,
       [](const CanaryReading& r, bool) { return static_cast<double>(r.cycles); }},
      {"memdiag_canary_failures_total", "Canary cycles whose allocations failed (a ceiling or the OS refused).",
       MetricType::Counter, [](const CanaryReading& r, bool) { return static_cast<double>(r.failures); }},
      {"memdiag_canary_skipped_total",
       "Canary cycles skipped because node memory PSI full (avg10) was at or above sources.canary.backoff_psi_full: "
       "the canary never adds to a crisis.",
       MetricType::Counter, [](const CanaryReading& r, bool) { return static_cast<double>(r.skipped); }},
      {"memdiag_canary_backing_off", "1 while the canary skips its cycles for memory pressure.", MetricType::Gauge,
       [](const CanaryReading& r, bool) { return r.backing_off ? 1.0 : 0.0; }},
      {"memdiag_canary_running", "1 while the canary runs (its child process is alive).",
       MetricType::Gauge, [](const CanaryReading&, bool running) { return running ? 1.0 : 0.0; }},
  };
  for (const Counter& c : kCounters) {
    sink.family(c.name, c.help, c.type);
    each_canary(section, [&](const std::string& cgroup, const CanaryReading& r, bool running) {
      sink.sample({{"cgroup", cgroup}}, c.value(r, running));
    });
  }
}

void render_allocator(const CanaryAllocatorStats& a, MetricSink& sink) {
  const struct {
    const char* name;
    const char* help;
    MetricType type;
    std::uint64_t value;
  } kStats[] = {
      {"memdiag_allocator_live_bytes", "Bytes the canary's allocator has handed out and not had back.",
       MetricType::Gauge, a.live_bytes},
      {"memdiag_allocator_held_bytes", "Bytes the canary's allocator has touched and not returned to the OS.",
       MetricType::Gauge, a.held_bytes},
      {"memdiag_allocator_reserved_bytes", "Address space the canary's allocator has reserved.", MetricType::Gauge,
       a.reserved_bytes},
      {"memdiag_allocator_released_bytes_total", "Bytes the canary's allocator returned to the OS (madvise).",
       MetricType::Counter, a.released_bytes_total},
      {"memdiag_allocator_mappings", "Mappings the canary's allocator holds: bounded whatever the free pattern.",
       MetricType::Gauge, a.mappings},
      {"memdiag_allocator_ceiling_bytes",
       "The canary allocator's ceiling: held bytes never pass it (sources.canary.ceiling_bytes).", MetricType::Gauge,
       a.ceiling_bytes},
      {"memdiag_allocator_ceiling_hits_total", "Allocations that met the canary allocator's ceiling.",
       MetricType::Counter, a.ceiling_hits_total},
      {"memdiag_allocator_failed_allocations_total", "Allocations the canary's allocator refused.", MetricType::Counter,
       a.failed_allocations_total},
  };
  for (const auto& s : kStats) {
    sink.family(s.name, s.help, s.type);
    sink.sample({}, static_cast<double>(s.value));
  }
}

}  // namespace

void render_canary(const CanarySection& section, MetricSink& sink) {
  render_histograms(section, sink);
  render_counters(section, sink);
  render_allocator(section.allocator, sink);
}

}  // namespace memdiag::prom
