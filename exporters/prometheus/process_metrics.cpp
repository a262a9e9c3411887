// SPDX-License-Identifier: Apache-2.0
#include "exporters/prometheus/process_metrics.hpp"

#include <array>
#include <charconv>

#include "exporters/prometheus/pid_label.hpp"

namespace memdiag::prom {
namespace {

using prometheus::MetricType;

constexpr std::array<std::string_view, 3> kResidentTypes = {"anon", "file", "shmem"};

// One sample per selected process that passes `wanted`, labelled pid and comm.
template <class Wanted, class Value>
void per_process(const ProcessSection& section, MetricSink& sink, Wanted wanted, Value value) {
  for (const SelectedProcess& p : section.selected) {
    if (!wanted(p)) continue;
    const PidLabel pid(p.pid);
    sink.sample({{"pid", pid.view}, {"comm", p.comm}}, value(p));
  }
}

void render_selected(const ProcessSection& section, MetricSink& sink) {
  auto all = [](const SelectedProcess&) { return true; };
  sink.family("memdiag_process_map_areas",
              "Memory mappings (VMAs) of a process, the count vm.max_map_count limits; for the top processes by "
              "map count and by resident memory, those above the threshold, and memdiagd itself.",
              MetricType::Gauge);
  per_process(section, sink, all, [](const SelectedProcess& p) { return static_cast<double>(p.map_count); });
  sink.family("memdiag_process_resident_bytes",
              "Resident memory of a selected process by type: anon, file (page cache mapped), shmem.",
              MetricType::Gauge);
  for (const SelectedProcess& p : section.selected) {
    const PidLabel pid(p.pid);
    const std::uint64_t values[] = {p.rss_anon_bytes, p.rss_file_bytes, p.rss_shmem_bytes};
    for (std::size_t t = 0; t < kResidentTypes.size(); ++t) {
      sink.sample({{"pid", pid.view}, {"comm", p.comm}, {"type", kResidentTypes[t]}}, static_cast<double>(values[t]));
    }
  }
  sink.family("memdiag_process_swap_bytes", "Swapped-out memory of a selected process.", MetricType::Gauge);
  per_process(section, sink, all, [](const SelectedProcess& p) { return static_cast<double>(p.swap_bytes); });
  sink.family("memdiag_process_virtual_bytes", "Virtual address space of a selected process (VmSize).",
              MetricType::Gauge);
  per_process(section, sink, all, [](const SelectedProcess& p) { return static_cast<double>(p.virtual_bytes); });
  sink.family("memdiag_process_committed_private_bytes",
              "Private memory a selected process has been promised: its private writable and stack mappings "
              "(VmData + VmStk), close to its share of Committed_AS.",
              MetricType::Gauge);
  per_process(section, sink, all, [](const SelectedProcess& p) { return static_cast<double>(p.committed_private_bytes); });
  sink.family("memdiag_process_unbacked_promise_bytes",
              "Estimated promise a selected process holds that no memory backs yet: committed private bytes minus "
              "resident anon and swap (floored at 0); selected also for the top_n by this figure.",
              MetricType::Gauge);
  per_process(section, sink, all, [](const SelectedProcess& p) { return static_cast<double>(p.unbacked_promise_bytes); });
  sink.family("memdiag_process_info",
              "A selected process's memory cgroup (1); join on pid and comm. cgroup is empty when unknown.",
              MetricType::Gauge);
  for (const SelectedProcess& p : section.selected) {
    const PidLabel pid(p.pid);
    sink.sample({{"pid", pid.view}, {"comm", p.comm}, {"cgroup", p.cgroup}}, 1);
  }
  sink.family("memdiag_process_map_areas_above_threshold",
              "Map count as a fraction of vm.max_map_count, for every process at or above "
              "sources.processes.map_areas_threshold (highest first, up to max_above_threshold).",
              MetricType::Gauge);
  per_process(
      section, sink, [](const SelectedProcess& p) { return (p.selected_for & kAboveThreshold) != 0; },
      [](const SelectedProcess& p) { return p.map_areas_ratio; });
}

void render_node(const ProcessSection& section, MetricSink& sink) {
  sink.family("memdiag_map_areas_ratio_max",
              "The highest map count of any process as a fraction of vm.max_map_count: at 1, mmap and even "
              "munmap fail with ENOMEM in that process.",
              MetricType::Gauge);
  sink.sample({}, section.map_areas_ratio_max);
  sink.family("memdiag_processes_by_map_areas_ratio",
              "Processes whose map count is at most `at_most` times vm.max_map_count (cumulative, like histogram "
              "buckets; a histogram of the present, so not a Prometheus histogram, whose buckets only grow).",
              MetricType::Gauge);
  for (std::size_t b = 0; b <= kMapAreasRatioBounds.size(); ++b) {
    std::array<char, 24> bound{};
    std::string_view at_most = "+Inf";
    if (b < kMapAreasRatioBounds.size()) {
      const auto [end, ec] = std::to_chars(bound.data(), bound.data() + bound.size(), kMapAreasRatioBounds[b]);
      at_most = std::string_view(bound.data(), ec == std::errc() ? static_cast<std::size_t>(end - bound.data()) : 0);
    }
    sink.sample({{"at_most", at_most}}, static_cast<double>(section.ratio_cumulative[b]));
  }
  sink.family("memdiag_processes_above_map_areas_threshold",
              "Processes at or above sources.processes.map_areas_threshold, all of them (not capped).",
              MetricType::Gauge);
  sink.sample({}, static_cast<double>(section.above_threshold));
  sink.family("memdiag_process_map_areas_threshold_ratio",
              "The configured threshold (sources.processes.map_areas_threshold), for alert rules.", MetricType::Gauge);
  sink.sample({}, section.threshold_ratio);
  sink.family("memdiag_process_above_threshold_dropped",
              "Processes above the threshold not exported because of sources.processes.max_above_threshold.",
              MetricType::Gauge);
  sink.sample({}, static_cast<double>(section.above_threshold_dropped));
  sink.family("memdiag_processes_unbacked_promise_bytes",
              "Estimated unbacked promises summed over every process scanned: per process, committed private bytes "
              "(VmData + VmStk) minus resident anon and swap, floored at 0; for the largest holders, whose maps are "
              "read, less their thread stacks and private file mappings (memdiag_processes_promise_not_due_bytes).",
              MetricType::Gauge);
  sink.sample({}, static_cast<double>(section.unbacked_promise_bytes));
  sink.family("memdiag_processes_promise_not_due_bytes",
              "Committed private memory of the largest promise holders that is not a promise likely to come due, by "
              "kind: thread_stacks (each thread's whole stack mapping, of which it touches a few pages) and "
              "private_file_maps (private writable file mappings, the file's pages until written). Read from the "
              "maps of twice top_n holders each scan; left out of their unbacked promise.",
              MetricType::Gauge);
  sink.sample({{"kind", "thread_stacks"}}, static_cast<double>(section.not_due_thread_stack_bytes));
  sink.sample({{"kind", "private_file_maps"}}, static_cast<double>(section.not_due_private_file_bytes));
  sink.family("memdiag_processes", "Processes scanned (kernel threads excluded).", MetricType::Gauge);
  sink.sample({}, static_cast<double>(section.processes));
  sink.family("memdiag_process_scan_skipped",
              "Processes the last scan skipped: reason unreadable (a file could not be read) or malformed.",
              MetricType::Gauge);
  sink.sample({{"reason", "unreadable"}}, static_cast<double>(section.unreadable));
  sink.sample({{"reason", "malformed"}}, static_cast<double>(section.malformed));
  sink.family("memdiag_process_scan_vanished_total",
              "Processes that exited while the /proc scanner read them (normal on a busy node).", MetricType::Counter);
  sink.sample({}, static_cast<double>(section.vanished_total));
  sink.family("memdiag_process_scan_info", "How processes are scanned: bpf_iter or procfs (1).", MetricType::Gauge);
  sink.sample({{"mode", section.mode}}, 1);
  sink.family("memdiag_process_scan_duration_seconds", "Wall time of the process scan being served.",
              MetricType::Gauge);
  sink.sample({}, section.scan_seconds);
  sink.family("memdiag_process_scan_cpu_seconds",
              "CPU time of the process scan being served. The source waits 100 times that before the next one (at "
              "most 1% of a CPU, at most 5 minutes), serving the last scan meanwhile.",
              MetricType::Gauge);
  sink.sample({}, section.scan_cpu_seconds);
  sink.family("memdiag_process_scan_in_flight_seconds",
              "How long a newer process scan has been running while the last complete one is served (0: none). "
              "Seconds or more: a process's files cannot be read, its mmap_lock held (e.g. by a task stuck in "
              "reclaim); the rest of the daemon is not held up.",
              MetricType::Gauge);
  sink.sample({}, section.scan_in_flight_seconds);
  sink.family("memdiag_process_scan_timestamp_seconds", "Unix time of the process scan being served.",
              MetricType::Gauge);
  sink.sample({}, std::chrono::duration<double>(section.scanned_at.time_since_epoch()).count());
}

void render_cgroup_sums(const ProcessSection& section, MetricSink& sink) {
  sink.family("memdiag_cgroup_processes", "Processes in a memory cgroup (its own, not its children's).",
              MetricType::Gauge);
  for (const auto& c : section.cgroups) sink.sample({{"cgroup", c.cgroup}}, static_cast<double>(c.processes));
  sink.family("memdiag_cgroup_process_resident_bytes",
              "Resident memory summed over the processes of a memory cgroup, by type; pages shared between "
              "processes count once per process.",
              MetricType::Gauge);
  for (const auto& c : section.cgroups) {
    const std::uint64_t values[] = {c.rss_anon_bytes, c.rss_file_bytes, c.rss_shmem_bytes};
    for (std::size_t t = 0; t < kResidentTypes.size(); ++t) {
      sink.sample({{"cgroup", c.cgroup}, {"type", kResidentTypes[t]}}, static_cast<double>(values[t]));
    }
  }
  sink.family("memdiag_cgroup_process_swap_bytes", "Swap summed over the processes of a memory cgroup.",
              MetricType::Gauge);
  for (const auto& c : section.cgroups) sink.sample({{"cgroup", c.cgroup}}, static_cast<double>(c.swap_bytes));
  sink.family("memdiag_cgroup_process_committed_private_bytes",
              "Private memory promised to the processes of a memory cgroup (VmData + VmStk summed).",
              MetricType::Gauge);
  for (const auto& c : section.cgroups) {
    sink.sample({{"cgroup", c.cgroup}}, static_cast<double>(c.committed_private_bytes));
  }
  sink.family("memdiag_cgroup_process_unbacked_promise_bytes",
              "Estimated unbacked promises of the processes of a memory cgroup: the per-process estimates "
              "(committed private minus resident anon and swap, floored at 0) summed.",
              MetricType::Gauge);
  for (const auto& c : section.cgroups) {
    sink.sample({{"cgroup", c.cgroup}}, static_cast<double>(c.unbacked_promise_bytes));
  }
  sink.family("memdiag_cgroup_process_map_areas", "Memory mappings summed over the processes of a memory cgroup.",
              MetricType::Gauge);
  for (const auto& c : section.cgroups) sink.sample({{"cgroup", c.cgroup}}, static_cast<double>(c.map_count));
  sink.family("memdiag_process_cgroups_dropped",
              "Memory cgroups whose process sums are not exported because of sources.processes.max_cgroups (kept: "
              "the largest by resident memory and by unbacked promise, in turn).",
              MetricType::Gauge);
  sink.sample({}, static_cast<double>(section.dropped_cgroups));
  sink.family("memdiag_process_unknown_cgroup", "Processes whose memory cgroup could not be named.",
              MetricType::Gauge);
  sink.sample({}, static_cast<double>(section.unknown_cgroup_processes));
}

}  // namespace

void render_processes(const ProcessSection& section, MetricSink& sink) {
  render_selected(section, sink);
  render_node(section, sink);
  render_cgroup_sums(section, sink);
}

}  // namespace memdiag::prom
