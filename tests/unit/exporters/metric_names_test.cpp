// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>
#include <prometheus/check_names.h>

#include "exporters/prometheus/metric_names.hpp"

namespace memdiag::prom {
namespace {

TEST(SnakeCase, KernelSpellings) {
  EXPECT_EQ(snake_case("MemTotal"), "mem_total");
  EXPECT_EQ(snake_case("MemAvailable"), "mem_available");
  EXPECT_EQ(snake_case("Active(anon)"), "active_anon");
  EXPECT_EQ(snake_case("Inactive(file)"), "inactive_file");
  EXPECT_EQ(snake_case("Committed_AS"), "committed_as");
  EXPECT_EQ(snake_case("CommitLimit"), "commit_limit");
  EXPECT_EQ(snake_case("AnonPages"), "anon_pages");
  EXPECT_EQ(snake_case("NFS_Unstable"), "nfs_unstable");
  EXPECT_EQ(snake_case("KReclaimable"), "k_reclaimable");
  EXPECT_EQ(snake_case("DirectMap4k"), "direct_map_4k");
  EXPECT_EQ(snake_case("DirectMap2M"), "direct_map_2m");
  EXPECT_EQ(snake_case("HugePages_Total"), "huge_pages_total");
  EXPECT_EQ(snake_case("Hugepagesize"), "hugepagesize");
  EXPECT_EQ(snake_case("ShmemPmdMapped"), "shmem_pmd_mapped");
  EXPECT_EQ(snake_case("4Weird"), "field_4weird");
  EXPECT_EQ(snake_case("(("), "field_");
}

TEST(MetricNames, ContractNames) {
  EXPECT_EQ(meminfo_metric_name("MemTotal", FieldKind::kBytes), "memdiag_meminfo_mem_total_bytes");
  EXPECT_EQ(meminfo_metric_name("Committed_AS", FieldKind::kBytes), "memdiag_meminfo_committed_as_bytes");
  EXPECT_EQ(meminfo_metric_name("Active(anon)", FieldKind::kBytes), "memdiag_meminfo_active_anon_bytes");
  EXPECT_EQ(meminfo_metric_name("HugePages_Free", FieldKind::kCount), "memdiag_meminfo_huge_pages_free_pages");
  EXPECT_EQ(vmstat_metric_name("pgscan_direct", FieldKind::kCounter), "memdiag_vmstat_pgscan_direct_total");
  EXPECT_EQ(vmstat_metric_name("allocstall_normal", FieldKind::kCounter),
            "memdiag_vmstat_allocstall_normal_total");
  EXPECT_EQ(vmstat_metric_name("nr_free_pages", FieldKind::kGauge), "memdiag_vmstat_nr_free_pages");
  EXPECT_EQ(vmstat_metric_name("direct_map_level2_splits", FieldKind::kCounter),
            "memdiag_vmstat_direct_map_level2_splits_total");
}

TEST(MetricNames, UnitLikeWordsAreSpelledOutForPromtool) {
  EXPECT_EQ(meminfo_metric_name("SReclaimable", FieldKind::kBytes), "memdiag_meminfo_slab_reclaimable_bytes");
  EXPECT_EQ(meminfo_metric_name("SUnreclaim", FieldKind::kBytes), "memdiag_meminfo_slab_unreclaim_bytes");
  EXPECT_EQ(meminfo_metric_name("SecPageTables", FieldKind::kBytes),
            "memdiag_meminfo_secondary_page_tables_bytes");
  EXPECT_EQ(vmstat_metric_name("nr_sec_page_table_pages", FieldKind::kGauge),
            "memdiag_vmstat_nr_secondary_page_table_pages");
  // Unknown future words that look like units get glued to a neighbour rather than linted.
  EXPECT_EQ(vmstat_metric_name("foo_ms_bar", FieldKind::kGauge), "memdiag_vmstat_fooms_bar");
  EXPECT_EQ(vmstat_metric_name("b_thing", FieldKind::kGauge), "memdiag_vmstat_bthing");
}

TEST(MetricNames, AlwaysValidPrometheusNames) {
  for (const char* weird : {"", "(", "A(b)C", "x__y", "Z9", "a-b", "ÄÖ", "_"}) {
    EXPECT_TRUE(prometheus::CheckMetricName(meminfo_metric_name(weird, FieldKind::kBytes))) << weird;
    EXPECT_TRUE(prometheus::CheckMetricName(vmstat_metric_name(weird, FieldKind::kCounter))) << weird;
  }
}

}  // namespace
}  // namespace memdiag::prom
