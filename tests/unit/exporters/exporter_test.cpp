// SPDX-License-Identifier: Apache-2.0
// The Prometheus rendering of snapshots: contract names, types, labels and valid names.
#include <gtest/gtest.h>
#include <prometheus/check_names.h>

#include <cmath>
#include <limits>
#include <set>
#include <sstream>

#include "exporters/prometheus/exposition.hpp"
#include "exporters/prometheus/snapshot_collector.hpp"
#include "probes/analysis/derive_figures.hpp"
#include "probes/catalog/source_catalog.hpp"

namespace memdiag::prom {
namespace {

using prometheus::MetricFamily;
using prometheus::MetricType;

const MetricFamily* find(const std::vector<MetricFamily>& families, const std::string& name) {
  for (const auto& f : families) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

SnapshotPtr fixture_snapshot(const std::string& tree) {
  auto snap = std::make_shared<Snapshot>();
  snap->sequence = 7;
  for (std::string_view name : {"meminfo", "vmstat", "pressure", "vm_sysctl"}) {  // cgroup trees: own tests
    auto source = make_source(name, KernelPaths{MEMDIAG_SOURCE_DIR "/tests/fixtures/" + tree + "/proc", "/sys"});
    SourceStatus status{std::string(name), false, 0.001, ""};
    Status st = source->probe();
    if (st) st = source->sample(*snap);
    status.up = st.ok();
    if (!st) status.error = st.error().message;
    snap->sources.push_back(status);
  }
  return snap;
}

TEST(Collector, RendersContractNamesWithTypes) {
  SnapshotStore store(4);
  store.publish(fixture_snapshot("kernel-6.18"));
  SnapshotCollector collector(store, BuildInfo{"1.2.3", "abc", "gcc"});
  const auto families = collector.Collect();

  const auto* total = find(families, "memdiag_meminfo_mem_total_bytes");
  ASSERT_NE(total, nullptr);
  EXPECT_EQ(total->type, MetricType::Gauge);
  EXPECT_DOUBLE_EQ(total->metric.at(0).gauge.value, 24683656.0 * 1024);

  for (const char* name : {"memdiag_meminfo_mem_available_bytes", "memdiag_meminfo_committed_as_bytes",
                           "memdiag_meminfo_commit_limit_bytes", "memdiag_meminfo_anon_pages_bytes",
                           "memdiag_meminfo_active_anon_bytes"}) {
    EXPECT_NE(find(families, name), nullptr) << name;
  }
  const auto* pgscan = find(families, "memdiag_vmstat_pgscan_direct_total");
  ASSERT_NE(pgscan, nullptr);
  EXPECT_EQ(pgscan->type, MetricType::Counter);
  const auto* free_pages = find(families, "memdiag_vmstat_nr_free_pages");
  ASSERT_NE(free_pages, nullptr);
  EXPECT_EQ(free_pages->type, MetricType::Gauge);
  for (const char* name : {"memdiag_vmstat_allocstall_normal_total", "memdiag_vmstat_workingset_refault_file_total",
                           "memdiag_vmstat_oom_kill_total"}) {
    EXPECT_NE(find(families, name), nullptr) << name;
  }

  const auto* build = find(families, "memdiag_build_info");
  ASSERT_NE(build, nullptr);
  EXPECT_EQ(build->metric.at(0).label.at(0).value, "1.2.3");
}

TEST(Collector, EveryKernelFieldIsExportedOnce) {
  const auto snap = fixture_snapshot("kernel-6.18");
  SnapshotStore store(1);
  store.publish(snap);
  const auto families = SnapshotCollector(store, {}).Collect();
  std::size_t meminfo = 0, vmstat = 0;
  std::set<std::string> names;
  for (const auto& f : families) {
    EXPECT_TRUE(names.insert(f.name).second) << "duplicate family " << f.name;
    EXPECT_TRUE(prometheus::CheckMetricName(f.name)) << f.name;
    EXPECT_FALSE(f.help.empty()) << f.name;
    if (f.name.rfind("memdiag_meminfo_", 0) == 0) ++meminfo;
    if (f.name.rfind("memdiag_vmstat_", 0) == 0) ++vmstat;
    if (f.type == MetricType::Counter) {
      EXPECT_EQ(f.name.substr(f.name.size() - 6), "_total") << f.name;
    }
    for (const auto& m : f.metric) {
      for (const auto& l : m.label) EXPECT_TRUE(prometheus::CheckLabelName(l.name)) << l.name;
    }
  }
  EXPECT_EQ(meminfo, snap->meminfo->values.size());
  EXPECT_EQ(vmstat, snap->vmstat->values.size());
}

TEST(Collector, PressureSecondsAndRatios) {
  SnapshotStore store(1);
  store.publish(fixture_snapshot("kernel-5.4"));
  const auto families = SnapshotCollector(store, {}).Collect();
  const auto* total = find(families, "memdiag_pressure_stall_seconds_total");
  ASSERT_NE(total, nullptr);
  // memory some+full, io some+full, cpu some only (5.4 prints no cpu full line)
  EXPECT_EQ(total->metric.size(), 5u);
  bool saw_memory_full = false;
  for (const auto& m : total->metric) {
    if (m.label.at(0).value == "memory" && m.label.at(1).value == "full") {
      EXPECT_DOUBLE_EQ(m.counter.value, 456.789012);
      saw_memory_full = true;
    }
  }
  EXPECT_TRUE(saw_memory_full);
  const auto* ratio = find(families, "memdiag_pressure_ratio");
  ASSERT_NE(ratio, nullptr);
  EXPECT_EQ(ratio->metric.size(), 15u);
  EXPECT_DOUBLE_EQ(ratio->metric.at(0).gauge.value, 0.125);  // memory some avg10=12.50
  const auto* sysctl = find(families, "memdiag_vm_sysctl");
  ASSERT_NE(sysctl, nullptr);
  bool saw_overcommit = false;
  for (const auto& m : sysctl->metric) {
    if (m.label.at(0).value == "overcommit_memory") {
      EXPECT_EQ(m.gauge.value, 1);
      saw_overcommit = true;
    }
  }
  EXPECT_TRUE(saw_overcommit);
}

TEST(Collector, DownSourceHasStatusButNoStaleSeries) {
  SnapshotStore store(1);
  store.publish(fixture_snapshot("kernel-3.10"));
  const auto families = SnapshotCollector(store, {}).Collect();
  EXPECT_EQ(find(families, "memdiag_pressure_ratio"), nullptr);
  const auto* up = find(families, "memdiag_source_up");
  ASSERT_NE(up, nullptr);
  for (const auto& m : up->metric) {
    EXPECT_EQ(m.gauge.value, m.label.at(0).value == "pressure" ? 0 : 1) << m.label.at(0).value;
  }
}

TEST(Collector, BeforeTheFirstSampleOnlyBuildInfo) {
  SnapshotStore store(1);
  const auto families = SnapshotCollector(store, {}).Collect();
  ASSERT_EQ(families.size(), 1u);
  EXPECT_EQ(families[0].name, "memdiag_build_info");
}

// Every line of an exposition, with sample values parsed so "1e+20" and "100000000000000000000"
// compare equal: the two renderers may spell a number differently, never mean a different one.
std::vector<std::pair<std::string, double>> exposition_lines(const std::string& text) {
  std::vector<std::pair<std::string, double>> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("#", 0) == 0) {
      lines.emplace_back(line, 0);
      continue;
    }
    const std::size_t space = line.rfind(' ');
    lines.emplace_back(line.substr(0, space), std::stod(line.substr(space + 1)));
  }
  return lines;
}

// Holds the fast text to prometheus-cpp's Collect() + TextSerializer, line by line; returns
// the number of lines. Both are fed by the same render() of the snapshot, so this proves only
// that the two serialisations agree (escaping, number formatting, ordering): a wrong name,
// unit or value would be wrong in both alike. That names and values are right is checked
// against the fixture files by an independent reader, tests/e2e/fixture_oracle.py (run by
// tests/e2e/test_goldens.py).
std::size_t expect_same_as_prometheus_cpp(const std::string& fast, const SnapshotCollector& collector) {
  const auto a = exposition_lines(fast);
  const auto b = exposition_lines(render_exposition(collector));
  EXPECT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    EXPECT_EQ(a[i].first, b[i].first);
    EXPECT_DOUBLE_EQ(a[i].second, b[i].second) << a[i].first;
  }
  return a.size();
}

TEST(Exposition, FastTextEqualsPrometheusCppSerializer) {
  for (const char* tree : {"kernel-6.18", "kernel-5.4", "kernel-3.10"}) {
    SnapshotStore store(1);
    store.publish(fixture_snapshot(tree));
    SnapshotCollector collector(store, BuildInfo{"1.0", "r\"q", "c\\x"});
    std::string fast;
    collector.render_text(fast);
    const std::string reference = render_exposition(collector);  // Collect() + TextSerializer
    const auto a = exposition_lines(fast);
    const auto b = exposition_lines(reference);
    ASSERT_EQ(a.size(), b.size()) << tree;
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].first, b[i].first) << tree;
      EXPECT_DOUBLE_EQ(a[i].second, b[i].second) << a[i].first;
    }
  }
}

TEST(Exposition, FastTextEqualsPrometheusCppSerializerWithCgroups) {
  const std::string tree = MEMDIAG_SOURCE_DIR "/tests/fixtures/cgroup-v2";
  auto snap = std::make_shared<Snapshot>();
  for (std::string_view name : {"meminfo", "cgroup"}) {
    auto source = make_source(name, KernelPaths{tree + "/proc", tree + "/sys"});
    ASSERT_TRUE(source->probe());
    ASSERT_TRUE(source->sample(*snap));
  }
  analysis::derive_figures(*snap);
  SnapshotStore store(1);
  store.publish(snap);
  SnapshotCollector collector(store, {});
  std::string fast;
  collector.render_text(fast);
  EXPECT_GT(expect_same_as_prometheus_cpp(fast, collector), 300u);
}

// A reclaim-stall section as the eBPF source would publish it: stalls in a few slots.
ReclaimStallSection stall_section() {
  ReclaimStallSection section;
  section.attach_mode = "tp_btf";
  section.kind_modes = {"tp_btf", "tp_btf", "tp_btf", "tp_btf", ""};  // throttled missing (a kernel before 5.16)
  section.oom_victims_mode = "tp_btf";
  StallDistribution d;
  d.slots[3] = 2;   // 8-16 ns: below the first bucket (1.024 us)
  d.slots[17] = 5;  // 131-262 us
  d.slots[18] = 1;  // 262-524 us
  d.slots[39] = 1;  // the open-ended slot: only in +Inf
  d.count = 9;
  d.sum_ns = 1'500'000;
  section.node[1] = d;
  section.cgroups.push_back(CgroupStall{"/job \"a\"", StallKind::kMemcg, d});
  section.oom_victims.push_back(CgroupOomVictims{"/job \"a\"", 2});
  section.node_oom_victims = 3;
  return section;
}

// The value of one series in an exposition (-1 and a failure when it is absent).
double sample_value(const std::string& text, const std::string& series) {
  const std::size_t at = text.find("\n" + series + " ");
  EXPECT_NE(at, std::string::npos) << series;
  return at == std::string::npos ? -1.0 : std::stod(text.substr(at + series.size() + 2));
}

// A snapshot holding only what the test put in it, published and rendered as /metrics would.
struct Rendered {
  explicit Rendered(Snapshot snapshot) : collector(store, {}) {
    store.publish(std::make_shared<Snapshot>(std::move(snapshot)));
    collector.render_text(text);
  }
  double value(const std::string& series) const { return sample_value(text, series); }
  SnapshotStore store{1};
  SnapshotCollector collector;
  std::string text;
};


TEST(ReclaimStallExport, CumulativeBucketsEndingAtTheCount) {
  Snapshot snap;
  snap.reclaim_stall = stall_section();
  const Rendered r(std::move(snap));
  const std::string& text = r.text;
  auto value = [&r](const std::string& series) { return r.value(series); };
  const std::string c = R"(cgroup="/job \"a\"")";
  EXPECT_EQ(value("memdiag_reclaim_stall_seconds_count{kind=\"memcg\"," + c + "}"), 9);
  EXPECT_DOUBLE_EQ(value("memdiag_reclaim_stall_seconds_sum{kind=\"memcg\"," + c + "}"), 0.0015);
  // Per cgroup, the coarse buckets (~65 us, ~1 ms, ~17 ms, ~268 ms, ~4.3 s).
  EXPECT_EQ(value("memdiag_reclaim_stall_seconds_bucket{kind=\"memcg\"," + c + ",le=\"6.5536e-05\"}"), 2);
  EXPECT_EQ(value("memdiag_reclaim_stall_seconds_bucket{kind=\"memcg\"," + c + ",le=\"0.001048576\"}"), 8);
  EXPECT_EQ(value("memdiag_reclaim_stall_seconds_bucket{kind=\"memcg\"," + c + ",le=\"4.294967296\"}"), 8);
  // The node's keep every bucket.
  EXPECT_EQ(value("memdiag_reclaim_stall_node_seconds_bucket{kind=\"memcg\",le=\"1.024e-06\"}"), 2);
  EXPECT_EQ(value("memdiag_reclaim_stall_node_seconds_bucket{kind=\"memcg\",le=\"0.000262144\"}"), 7);
  EXPECT_EQ(value("memdiag_reclaim_stall_node_seconds_bucket{kind=\"memcg\",le=\"17.179869184\"}"), 8);
  EXPECT_EQ(value("memdiag_reclaim_stall_seconds_bucket{kind=\"memcg\"," + c + ",le=\"+Inf\"}"), 9);
  EXPECT_EQ(value("memdiag_reclaim_stall_node_seconds_count{kind=\"memcg\"}"), 9);
  EXPECT_EQ(value("memdiag_reclaim_stall_node_seconds_count{kind=\"direct\"}"), 0);
  EXPECT_EQ(value("memdiag_oom_victims_total{" + c + "}"), 2);
  EXPECT_EQ(value("memdiag_oom_victims_node_total"), 3);
  EXPECT_EQ(value("memdiag_reclaim_stall_probe_info{mode=\"tp_btf\"}"), 1);
  EXPECT_EQ(value("memdiag_reclaim_stall_kind_attached{kind=\"memcg\",mode=\"tp_btf\"}"), 1);
  EXPECT_EQ(value("memdiag_reclaim_stall_kind_attached{kind=\"throttled\",mode=\"none\"}"), 0);
  EXPECT_EQ(value("memdiag_oom_victims_attached{mode=\"tp_btf\"}"), 1);
  // 6 buckets per cgroup series (5 bounds, then +Inf); 14 per node series (13 from ~1 us to ~17 s).
  const auto count_of = [&text](const std::string& prefix) {
    std::size_t n = 0;
    for (std::size_t at = 0; (at = text.find(prefix, at)) != std::string::npos; ++at) ++n;
    return n;
  };
  EXPECT_EQ(count_of("memdiag_reclaim_stall_seconds_bucket{"), 6u);
  EXPECT_EQ(count_of("memdiag_reclaim_stall_node_seconds_bucket{kind=\"memcg\""), 14u);
}

TEST(ReclaimStallExport, FastTextEqualsPrometheusCppSerializer) {
  Snapshot snap;
  snap.reclaim_stall = stall_section();
  const Rendered r(std::move(snap));
  expect_same_as_prometheus_cpp(r.text, r.collector);
}

ProcessSection process_section() {
  ProcessSection section;
  section.mode = "procfs";
  section.max_map_count = 1000;
  section.threshold_ratio = 0.8;
  section.processes = 3;
  section.map_areas_ratio_max = 0.9;
  section.above_threshold = 1;
  section.ratio_cumulative = {0, 1, 2, 2, 2, 2, 3, 3, 3};
  SelectedProcess near_wall;
  near_wall.pid = 4242;
  near_wall.comm = "zig \"test\"";
  near_wall.cgroup = "/job";
  near_wall.map_count = 900;
  near_wall.map_areas_ratio = 0.9;
  near_wall.rss_anon_bytes = 4096;
  near_wall.selected_for = kTopMapAreas | kAboveThreshold;
  SelectedProcess self;
  self.pid = 7;
  self.comm = "memdiagd";
  self.map_count = 120;
  self.map_areas_ratio = 0.12;
  self.selected_for = kSelf;
  section.selected = {self, near_wall};
  section.cgroups.push_back(CgroupProcessTotals{"/job", 2, 1000, 8192, 10, 0, 3});
  section.vanished_total = 5;
  return section;
}

TEST(ProcessExport, SelectedProcessesThresholdHistogramAndCgroupSums) {
  Snapshot snap;
  snap.processes = process_section();
  const Rendered r(std::move(snap));
  const std::string& text = r.text;
  auto value = [&r](const std::string& series) { return r.value(series); };
  const std::string zig = R"(pid="4242",comm="zig \"test\"")";
  EXPECT_EQ(value("memdiag_process_map_areas{" + zig + "}"), 900);
  EXPECT_EQ(value("memdiag_process_map_areas{pid=\"7\",comm=\"memdiagd\"}"), 120);
  EXPECT_EQ(value("memdiag_process_resident_bytes{" + zig + ",type=\"anon\"}"), 4096);
  EXPECT_EQ(value("memdiag_process_info{" + zig + ",cgroup=\"/job\"}"), 1);
  EXPECT_DOUBLE_EQ(value("memdiag_process_map_areas_above_threshold{" + zig + "}"), 0.9);
  // Only processes above the threshold have an above_threshold series.
  EXPECT_EQ(text.find("memdiag_process_map_areas_above_threshold{pid=\"7\""), std::string::npos);
  EXPECT_DOUBLE_EQ(value("memdiag_map_areas_ratio_max"), 0.9);
  EXPECT_EQ(value("memdiag_processes_by_map_areas_ratio{at_most=\"0.01\"}"), 1);
  EXPECT_EQ(value("memdiag_processes_by_map_areas_ratio{at_most=\"0.9\"}"), 3);
  EXPECT_EQ(value("memdiag_processes_by_map_areas_ratio{at_most=\"+Inf\"}"), 3);
  EXPECT_EQ(value("memdiag_processes_above_map_areas_threshold"), 1);
  EXPECT_DOUBLE_EQ(value("memdiag_process_map_areas_threshold_ratio"), 0.8);
  EXPECT_EQ(value("memdiag_cgroup_process_resident_bytes{cgroup=\"/job\",type=\"anon\"}"), 8192);
  EXPECT_EQ(value("memdiag_cgroup_process_map_areas{cgroup=\"/job\"}"), 1000);
  EXPECT_EQ(value("memdiag_cgroup_processes{cgroup=\"/job\"}"), 2);
  EXPECT_EQ(value("memdiag_process_scan_vanished_total"), 5);
  EXPECT_EQ(value("memdiag_process_scan_info{mode=\"procfs\"}"), 1);
}

TEST(ProcessExport, FastTextEqualsPrometheusCppSerializer) {
  Snapshot snap;
  snap.processes = process_section();
  const Rendered r(std::move(snap));
  expect_same_as_prometheus_cpp(r.text, r.collector);
}

CanarySection canary_section() {
  CanarySection section;
  section.node_cgroup = "/system.slice/memdiagd.service";
  section.node_running = true;
  for (std::uint64_t ns : {3000u, 5000u, 9000u, 70000u}) section.node.page_fault.record(ns);
  section.node.cycle.record(20000000);
  section.node.cycles = 1;
  section.allocator.released_bytes_total = 16u << 20;
  section.allocator.mappings = 2;
  CgroupCanaryReading pod;
  pod.cgroup = "/kubepods/pod-a";
  pod.running = true;
  pod.reading.skipped = 4;
  pod.reading.backing_off = true;
  section.cgroups.push_back(pod);
  return section;
}

TEST(Exposition, LabelValuesAreValidUtf8WhateverTheirSource) {
  // A cgroup directory may be named with any bytes; Prometheus refuses a scrape over one.
  Snapshot snap;
  snap.processes = process_section();
  snap.processes->cgroups.push_back(CgroupProcessTotals{"/bad\xed\xa0\x80\xff/caf\xc3\xa9", 1, 1, 1, 1, 1, 1});
  const Rendered r(std::move(snap));
  EXPECT_EQ(r.value("memdiag_cgroup_processes{cgroup=\"/bad????" "/caf\xc3\xa9\"}"), 1);
  expect_same_as_prometheus_cpp(r.text, r.collector);
}

TEST(CanaryExport, HistogramsCountersAndAllocatorStats) {
  Snapshot snap;
  snap.canary = canary_section();
  const Rendered r(std::move(snap));
  auto value = [&r](const std::string& series) { return r.value(series); };
  const std::string node = R"(cgroup="/system.slice/memdiagd.service")";
  EXPECT_EQ(value("memdiag_canary_page_fault_seconds_count{" + node + "}"), 4);
  EXPECT_DOUBLE_EQ(value("memdiag_canary_page_fault_seconds_sum{" + node + "}"), 87000e-9);
  // Bounds 4.096 us, 16.384 us, 65.536 us, 262.144 us: 3 us | 5 us, 9 us | - | 70 us.
  EXPECT_EQ(value("memdiag_canary_page_fault_seconds_bucket{" + node + ",le=\"4.096e-06\"}"), 1);
  EXPECT_EQ(value("memdiag_canary_page_fault_seconds_bucket{" + node + ",le=\"1.6384e-05\"}"), 3);
  EXPECT_EQ(value("memdiag_canary_page_fault_seconds_bucket{" + node + ",le=\"6.5536e-05\"}"), 3);
  EXPECT_EQ(value("memdiag_canary_page_fault_seconds_bucket{" + node + ",le=\"0.000262144\"}"), 4);
  EXPECT_EQ(value("memdiag_canary_cycles_total{" + node + "}"), 1);
  EXPECT_EQ(value("memdiag_canary_skipped_total{cgroup=\"/kubepods/pod-a\"}"), 4);
  EXPECT_EQ(value("memdiag_canary_backing_off{cgroup=\"/kubepods/pod-a\"}"), 1);
  EXPECT_EQ(value("memdiag_canary_running{cgroup=\"/kubepods/pod-a\"}"), 1);
  EXPECT_EQ(value("memdiag_canary_running{" + node + "}"), 1);
  EXPECT_EQ(value("memdiag_allocator_released_bytes_total"), 16 << 20);
  EXPECT_EQ(value("memdiag_allocator_mappings"), 2);
  expect_same_as_prometheus_cpp(r.text, r.collector);
}

TEST(CanaryExport, TheDaemonsCanaryIsNotRunningWhileItsChildIsNot) {
  Snapshot snap;
  snap.canary = canary_section();
  snap.canary->node_running = false;  // its child died and is not started again yet
  const Rendered r(std::move(snap));
  EXPECT_EQ(r.value("memdiag_canary_running{cgroup=\"/system.slice/memdiagd.service\"}"), 0);
  EXPECT_EQ(r.value("memdiag_canary_cycles_total{cgroup=\"/system.slice/memdiagd.service\"}"), 1) << "its counts stay";
  EXPECT_EQ(r.value("memdiag_canary_running{cgroup=\"/kubepods/pod-a\"}"), 1);
}

TEST(TextSink, EscapesAndSpecialValues) {
  std::string out;
  TextSink sink(out);
  sink.family("x_total", "a\\b\nc", MetricType::Counter);
  sink.sample({{"l", "q\"\\\n"}}, std::numeric_limits<double>::infinity());
  sink.sample({}, -std::numeric_limits<double>::infinity());
  sink.sample({}, std::nan(""));
  sink.sample({}, 25276063744.0);
  EXPECT_EQ(out,
            "# HELP x_total a\\\\b\\nc\n# TYPE x_total counter\n"
            "x_total{l=\"q\\\"\\\\\\n\"} +Inf\nx_total -Inf\nx_total NaN\nx_total 25276063744\n");
}

TEST(Exposition, TextFormat) {
  SnapshotStore store(1);
  store.publish(fixture_snapshot("kernel-6.18"));
  std::string text;
  SnapshotCollector(store, {}).render_text(text);
  EXPECT_NE(text.find("# TYPE memdiag_vmstat_pgscan_direct_total counter\n"), std::string::npos);
  EXPECT_NE(text.find("\nmemdiag_meminfo_mem_total_bytes 25276063744\n"), std::string::npos);
  EXPECT_NE(text.find("memdiag_pressure_ratio{resource=\"memory\",kind=\"some\",window=\"10s\"}"), std::string::npos);
}

}  // namespace
}  // namespace memdiag::prom
