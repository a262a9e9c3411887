// SPDX-License-Identifier: Apache-2.0
#include "exporters/prometheus/cgroup_metrics.hpp"

#include "exporters/prometheus/cgroup_detail.hpp"
#include "exporters/prometheus/cgroup_labels.hpp"

#include <array>
#include <functional>

namespace memdiag::prom {
namespace {

using prometheus::MetricType;

// One family: a sample for each cgroup where `value` has something to say.
void per_cgroup(const CgroupSection& section, MetricSink& sink, const char* name, const char* help, MetricType type,
                const std::function<std::optional<double>(const CgroupSample&)>& value) {
  sink.family(name, help, type);
  for (const auto& c : section.cgroups) {
    if (auto v = value(c)) {
      CgroupLabels labels(c);
      labels.emit(sink, {}, *v);
    }
  }
}

std::optional<double> as_double(const std::optional<std::uint64_t>& v) {
  return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
}

}  // namespace

void render_cgroups(const CgroupSection& section, const DerivedFigures& derived, MetricSink& sink) {
  sink.family("memdiag_cgroups_discovered", "Memory cgroups found within max_depth and the include/exclude patterns.",
              MetricType::Gauge);
  sink.sample({{"mode", section.mode}}, static_cast<double>(section.discovered));
  sink.family("memdiag_cgroups_dropped",
              "Cgroups discovered but not exported because of sources.cgroup.max_cgroups (least important first).",
              MetricType::Gauge);
  sink.sample({}, static_cast<double>(section.dropped));
  sink.family("memdiag_cgroups_watched",
              "Cgroups watched for notifications as they fire (sources.cgroup.max_watched): v1 pressure_level and "
              "oom_control eventfds, v2 memory.events through inotify.",
              MetricType::Gauge);
  sink.sample({}, static_cast<double>(section.watched));
  if (section.oom_notifications) {
    sink.family("memdiag_cgroups_oom_notifications_total",
                "OOMs in watched cgroups, each counted once (v2: memory.events oom of the top-most watched "
                "cgroups; v1: oom_control notifications beyond those of a watched ancestor notified with them), also "
                "in cgroups removed or no longer watched since, such as one removed right after its OOM.",
                MetricType::Counter);
    sink.sample({}, static_cast<double>(*section.oom_notifications));
  }
  sink.family("memdiag_cgroup_malformed_files", "Cgroup files present but unparsable in the last sample.",
              MetricType::Gauge);
  sink.sample({}, static_cast<double>(section.malformed_files));
  sink.family("memdiag_cgroup_tree_walks_total",
              "Times the cgroup hierarchy was listed: only when a cgroup was created, removed or renamed "
              "(inotify), or at every sample when the tree cannot be watched.",
              MetricType::Counter);
  sink.sample({}, static_cast<double>(section.tree_walks));
  sink.family("memdiag_cgroup_open_files", "Cgroup file descriptors kept open between samples.", MetricType::Gauge);
  sink.sample({}, static_cast<double>(section.open_files));

  sink.family("memdiag_cgroup_leaf_limits_sum_bytes",
              "Sum of the hard memory limits of all limited leaf cgroups: what has been promised.", MetricType::Gauge);
  sink.sample({}, static_cast<double>(section.leaf_limits_sum_bytes));
  sink.family("memdiag_cgroup_leaves", "Leaf cgroups by whether they have a hard memory limit.", MetricType::Gauge);
  sink.sample({{"limited", "true"}}, static_cast<double>(section.limited_leaves));
  sink.sample({{"limited", "false"}}, static_cast<double>(section.unlimited_leaves));
  if (section.effective_limits_sum_bytes) {
    sink.family("memdiag_cgroup_effective_limits_sum_bytes",
                "The cgroups' hard memory limits as they bind: each capped subtree counted once, at the lower of its "
                "limit and what its children count (an unlimited leaf under a limit counts as much as that limit "
                "allows).",
                MetricType::Gauge);
    sink.sample({}, static_cast<double>(*section.effective_limits_sum_bytes));
  }
  if (derived.cgroup_limit_overcommit_ratio) {
    sink.family("memdiag_cgroup_limit_overcommit_ratio",
                "The cgroups' hard limits as they bind (memdiag_cgroup_effective_limits_sum_bytes) over MemTotal; "
                "above 1 the limits cannot all be honoured.",
                MetricType::Gauge);
    sink.sample({}, *derived.cgroup_limit_overcommit_ratio);
  }

  per_cgroup(section, sink, "memdiag_cgroup_memory_usage_bytes",
             "Memory charged to the cgroup (v2 memory.current, v1 memory.usage_in_bytes).", MetricType::Gauge,
             [](const CgroupSample& c) { return as_double(c.usage_bytes); });
  per_cgroup(section, sink, "memdiag_cgroup_memory_limit_bytes",
             "Hard limit (v2 memory.max, v1 memory.limit_in_bytes); absent when unlimited.", MetricType::Gauge,
             [](const CgroupSample& c) { return c.limited ? as_double(c.limit_bytes) : std::nullopt; });
  per_cgroup(section, sink, "memdiag_cgroup_memory_headroom_bytes",
             "Limit minus usage: how much more the cgroup may charge before reclaim or OOM.", MetricType::Gauge,
             [](const CgroupSample& c) -> std::optional<double> {
               if (!c.limited || !c.limit_bytes || !c.usage_bytes) return std::nullopt;
               return static_cast<double>(*c.limit_bytes) - static_cast<double>(*c.usage_bytes);
             });
  per_cgroup(section, sink, "memdiag_cgroup_memory_fill_ratio", "Usage over the hard limit.", MetricType::Gauge,
             [](const CgroupSample& c) -> std::optional<double> {
               if (!c.limited || !c.limit_bytes || !c.usage_bytes || *c.limit_bytes == 0) return std::nullopt;
               return static_cast<double>(*c.usage_bytes) / static_cast<double>(*c.limit_bytes);
             });
  per_cgroup(section, sink, "memdiag_cgroup_memory_high_bytes", "v2 memory.high throttle limit; absent when max.",
             MetricType::Gauge, [](const CgroupSample& c) { return as_double(c.high_bytes); });
  per_cgroup(section, sink, "memdiag_cgroup_memory_low_bytes", "v2 memory.low protection.", MetricType::Gauge,
             [](const CgroupSample& c) { return as_double(c.low_bytes); });
  per_cgroup(section, sink, "memdiag_cgroup_swap_usage_bytes", "v2 memory.swap.current.", MetricType::Gauge,
             [](const CgroupSample& c) { return as_double(c.swap_usage_bytes); });
  per_cgroup(section, sink, "memdiag_cgroup_memsw_usage_bytes", "v1 memory.memsw.usage_in_bytes (memory + swap).",
             MetricType::Gauge, [](const CgroupSample& c) { return as_double(c.memsw_usage_bytes); });
  per_cgroup(section, sink, "memdiag_cgroup_memsw_limit_bytes",
             "v1 memory.memsw.limit_in_bytes (memory + swap); absent when unlimited.", MetricType::Gauge,
             [](const CgroupSample& c) { return as_double(c.memsw_limit_bytes); });
  per_cgroup(section, sink, "memdiag_cgroup_memory_failcnt_total",
             "v1 memory.failcnt: times the usage hit the limit (each one a memcg reclaim).", MetricType::Counter,
             [](const CgroupSample& c) { return as_double(c.failcnt); });
  per_cgroup(section, sink, "memdiag_cgroup_under_oom", "v1 memory.oom_control under_oom (1 while OOM-blocked).",
             MetricType::Gauge, [](const CgroupSample& c) -> std::optional<double> {
               if (!c.under_oom) return std::nullopt;
               return *c.under_oom ? 1 : 0;
             });

  sink.family("memdiag_cgroup_memory_events_total",
              "memory.events counters (v2: low, high, max, oom, oom_kill, oom_group_kill; v1: oom_kill from "
              "memory.oom_control).",
              MetricType::Counter);
  for (const auto& c : section.cgroups) {
    CgroupLabels labels(c);
    for (std::size_t e = 0; e < c.events.size(); ++e) {
      if (!c.events[e]) continue;
      labels.emit(sink, {{"event", kCgroupEventNames[e]}}, static_cast<double>(*c.events[e]));
    }
  }

  sink.family("memdiag_cgroup_pressure_events_total",
              "v1 memory.pressure_level notifications by level (low: reclaiming; medium: swapping or "
              "thrashing caches; critical: about to OOM), counted by eventfd as they happen.",
              MetricType::Counter);
  for (const auto& c : section.cgroups) {
    if (!c.notifications || !c.notifications->has_pressure_levels) continue;
    CgroupLabels labels(c);
    for (std::size_t l = 0; l < kPressureLevelNames.size(); ++l) {
      labels.emit(sink, {{"level", kPressureLevelNames[l]}}, static_cast<double>(c.notifications->pressure[l]));
    }
  }
  per_cgroup(section, sink, "memdiag_cgroup_oom_notifications_total",
             "OOM situations in the cgroup as they happen: v1 memory.oom_control eventfd notifications, v2 "
             "increments of memory.events oom seen through inotify. Counted from when the cgroup was first watched.",
             MetricType::Counter, [](const CgroupSample& c) -> std::optional<double> {
               if (!c.notifications) return std::nullopt;
               return static_cast<double>(c.notifications->oom);
             });
  // The detail (memory.stat keys, PSI averages) only for the cgroups that matter now.
  const auto detailed = detailed_cgroups(section, derived);
  sink.family("memdiag_cgroup_memory_stat_bytes",
              "memory.stat sizes (anon, file, kernel, shmem, ...; v1 total_* mapped to the v2 names), for the "
              "cgroups that matter now (the 10 most important, those stalling, named in a stalling scope or within "
              "10 % of their limit).",
              MetricType::Gauge);
  for (const auto& c : section.cgroups) {
    if (!detailed.contains(c.path)) continue;
    CgroupLabels labels(c);
    for (const auto& s : c.stat) {
      if (!s.counter) labels.emit(sink, {{"key", s.key}}, static_cast<double>(s.value));
    }
  }
  sink.family("memdiag_cgroup_memory_stat_events_total",
              "memory.stat event counters (workingset_refault_*, workingset_activate_*, pgscan*, pgsteal*, "
              "pgmajfault, ...), for the cgroups that matter now (as memdiag_cgroup_memory_stat_bytes).",
              MetricType::Counter);
  for (const auto& c : section.cgroups) {
    if (!detailed.contains(c.path)) continue;
    CgroupLabels labels(c);
    for (const auto& s : c.stat) {
      if (s.counter) labels.emit(sink, {{"key", s.key}}, static_cast<double>(s.value));
    }
  }

  sink.family("memdiag_cgroup_pressure_stall_seconds_total",
              "Cgroup memory PSI total: time its tasks stalled on memory (some = at least one, full = all).",
              MetricType::Counter);
  for (const auto& c : section.cgroups) {
    if (!c.pressure) continue;
    CgroupLabels labels(c);
    labels.emit(sink, {{"kind", "some"}}, static_cast<double>(c.pressure->some.total_us) / 1e6);
    if (c.pressure->full) {
      labels.emit(sink, {{"kind", "full"}}, static_cast<double>(c.pressure->full->total_us) / 1e6);
    }
  }
  sink.family("memdiag_cgroup_pressure_ratio",
              "Cgroup memory PSI averages as ratios, for the cgroups that matter now (as "
              "memdiag_cgroup_memory_stat_bytes; every exported cgroup has memdiag_cgroup_pressure_stall_seconds_total).",
              MetricType::Gauge);
  for (const auto& c : section.cgroups) {
    if (!c.pressure || !detailed.contains(c.path)) continue;
    CgroupLabels labels(c);
    auto emit = [&](std::string_view kind, const PsiLine& line) {
      labels.emit(sink, {{"kind", kind}, {"window", "10s"}}, line.avg10);
      labels.emit(sink, {{"kind", kind}, {"window", "60s"}}, line.avg60);
      labels.emit(sink, {{"kind", kind}, {"window", "300s"}}, line.avg300);
    };
    emit("some", c.pressure->some);
    if (c.pressure->full) emit("full", *c.pressure->full);
  }
}

}  // namespace memdiag::prom
