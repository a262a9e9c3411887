#include "exporters/prometheus/reclaim_stall_metrics.hpp"

#include "exporters/prometheus/log2_buckets.hpp"

namespace memdiag::prom {

using prometheus::MetricType;

void render_reclaim_stall(const ReclaimStallSection& section, MetricSink& sink) {
  Log2Cumulative cumulative{};
  sink.family("memdiag_reclaim_stall_node_seconds",
              "Time tasks of the whole node waited in one reclaim, compaction or throttling episode, by kind "
              "(eBPF on vmscan/compaction tracepoints): direct = global direct reclaim, memcg = a cgroup's limit, "
              "softlimit = v1 soft limit, compaction = direct compaction, throttled = reclaim throttling.",
              MetricType::Histogram);
  for (std::size_t k = 0; k < section.node.size(); ++k) {
    const LabelView labels[] = {{"kind", kStallKindNames[k]}};
    sink.histogram(labels, 1, log2_histogram_view(section.node[k], cumulative));
  }
  sink.family("memdiag_reclaim_stall_seconds",
              "Time tasks of a memory cgroup waited in one reclaim, compaction or throttling episode, by kind, for the "
              "most stalled cgroups (sources.reclaim_stall.max_cgroups).",
              MetricType::Histogram);
  for (const auto& c : section.cgroups) {
    const LabelView labels[] = {{"kind", to_string(c.kind)}, {"cgroup", c.cgroup}};
    sink.histogram(labels, 2, log2_histogram_view(c.stall, cumulative));
  }
  sink.family("memdiag_oom_victims_total", "Tasks the OOM killer chose, by the memory cgroup they were in (eBPF).",
              MetricType::Counter);
  for (const auto& v : section.oom_victims) sink.sample({{"cgroup", v.cgroup}}, static_cast<double>(v.count));
  sink.family("memdiag_oom_victims_node_total", "Tasks the OOM killer chose on the node, in any cgroup (eBPF).",
              MetricType::Counter);
  sink.sample({}, static_cast<double>(section.node_oom_victims));
  sink.family("memdiag_reclaim_stall_cgroups_dropped",
              "Stalled cgroups not exported because of sources.reclaim_stall.max_cgroups (least stalled first).",
              MetricType::Gauge);
  sink.sample({}, static_cast<double>(section.dropped_cgroups));
  sink.family("memdiag_reclaim_stall_dropped_events_total",
              "Stall events and OOM victims the kernel side could not record (a map full, a victim unresolvable).",
              MetricType::Counter);
  sink.sample({}, static_cast<double>(section.dropped_events));
  sink.family("memdiag_reclaim_stall_probe_info", "How the eBPF programs are attached: tp_btf or tracepoint (1).",
              MetricType::Gauge);
  sink.sample({{"mode", section.attach_mode}}, 1);
}

}  // namespace memdiag::prom
