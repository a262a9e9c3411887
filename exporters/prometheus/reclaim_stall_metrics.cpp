// SPDX-License-Identifier: Apache-2.0
#include "exporters/prometheus/reclaim_stall_metrics.hpp"

#include "exporters/prometheus/log2_buckets.hpp"

namespace memdiag::prom {

using prometheus::MetricType;

namespace {
constexpr std::string_view kNotAttached = "none";
}  // namespace

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
              "most stalled cgroups (sources.reclaim_stall.max_cgroups); coarse buckets (~65us, ~1ms, ~17ms, ~270ms, "
              "~4.3s), memdiag_reclaim_stall_node_seconds has them all.",
              MetricType::Histogram);
  for (const auto& c : section.cgroups) {
    const LabelView labels[] = {{"kind", to_string(c.kind)}, {"cgroup", c.cgroup}};
    sink.histogram(labels, 2, coarse_log2_histogram_view(c.stall, cumulative));
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
  // Each kind attaches on its own, so a kernel without one tracepoint (mm_vmscan_throttled
  // before 5.16) still traces the others; a histogram that stays empty is then told apart from
  // one whose kind is not traced at all.
  sink.family("memdiag_reclaim_stall_kind_attached",
              "Whether the eBPF programs of a stall kind of memdiag_reclaim_stall_node_seconds are attached (1) "
              "and how (mode tp_btf or tracepoint), or not (0, mode none: this kernel lacks its tracepoints; the "
              "log says why).",
              MetricType::Gauge);
  for (std::size_t k = 0; k < section.kind_modes.size(); ++k) {
    const std::string_view mode = section.kind_modes[k];
    const LabelView labels[] = {{"kind", kStallKindNames[k]}, {"mode", mode.empty() ? kNotAttached : mode}};
    sink.sample(labels, 2, mode.empty() ? 0 : 1);
  }
  sink.family("memdiag_oom_victims_attached",
              "Whether the eBPF program counting OOM victims (oom:mark_victim) is attached (1) and how (mode tp_btf "
              "or tracepoint), or not (0, mode none; the log says why).",
              MetricType::Gauge);
  const std::string_view oom_mode = section.oom_victims_mode;
  sink.sample({{"mode", oom_mode.empty() ? kNotAttached : oom_mode}}, oom_mode.empty() ? 0 : 1);
}

}  // namespace memdiag::prom
