#include "exporters/prometheus/reclaim_stall_metrics.hpp"

#include <array>

namespace memdiag::prom {
namespace {

using prometheus::MetricType;

// Slot i of the kernel histogram holds stalls below 2^(i+1) ns: bucket b ends with slot 9 + 2b.
constexpr std::size_t kFirstSlot = 9;
constexpr std::size_t kSlotStep = 2;
static_assert(kFirstSlot + kSlotStep * (kStallBuckets - 1) < kStallSlots - 1, "the last slot is open-ended");

const std::array<double, kStallBuckets>& bounds() {
  static const auto table = [] {
    std::array<double, kStallBuckets> b{};
    for (std::size_t i = 0; i < kStallBuckets; ++i) b[i] = stall_bucket_bound_seconds(i);
    return b;
  }();
  return table;
}

HistogramView view(const StallDistribution& d, std::array<std::uint64_t, kStallBuckets>& cumulative) {
  std::uint64_t running = 0;
  std::size_t slot = 0;
  for (std::size_t b = 0; b < kStallBuckets; ++b) {
    for (const std::size_t last = kFirstSlot + kSlotStep * b; slot <= last; ++slot) running += d.slots[slot];
    cumulative[b] = running;
  }
  // The kernel bumps a slot before the count: a read racing an event can see the slots one
  // ahead. +Inf is the total of the slots, so buckets never exceed it.
  std::uint64_t total = running;
  for (; slot < kStallSlots; ++slot) total += d.slots[slot];
  return HistogramView{bounds().data(), cumulative.data(), kStallBuckets, total, static_cast<double>(d.sum_ns) / 1e9};
}

}  // namespace

double stall_bucket_bound_seconds(std::size_t bucket) {
  return static_cast<double>(std::uint64_t{1} << (kFirstSlot + kSlotStep * bucket + 1)) / 1e9;
}

void render_reclaim_stall(const ReclaimStallSection& section, MetricSink& sink) {
  std::array<std::uint64_t, kStallBuckets> cumulative{};
  sink.family("memdiag_reclaim_stall_node_seconds",
              "Time tasks of the whole node waited in one reclaim, compaction or throttling episode, by kind "
              "(eBPF on vmscan/compaction tracepoints): direct = global direct reclaim, memcg = a cgroup's limit, "
              "softlimit = v1 soft limit, compaction = direct compaction, throttled = reclaim throttling.",
              MetricType::Histogram);
  for (std::size_t k = 0; k < section.node.size(); ++k) {
    const LabelView labels[] = {{"kind", kStallKindNames[k]}};
    sink.histogram(labels, 1, view(section.node[k], cumulative));
  }
  sink.family("memdiag_reclaim_stall_seconds",
              "Time tasks of a memory cgroup waited in one reclaim, compaction or throttling episode, by kind, for the "
              "most stalled cgroups (sources.reclaim_stall.max_cgroups).",
              MetricType::Histogram);
  for (const auto& c : section.cgroups) {
    const LabelView labels[] = {{"kind", kStallKindNames[c.kind]}, {"cgroup", c.cgroup}};
    sink.histogram(labels, 2, view(c.stall, cumulative));
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
