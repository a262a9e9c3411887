# SPDX-License-Identifier: Apache-2.0
"""The series budget at the defaults (docs/operations.md "Series per node"): on a busy node (2,000
memory cgroups shaped like a Kubernetes node's containers, each with a limit and a process), the
real daemon on the example config emits fewer than 3,000 samples per scrape, and still every
family the dashboards, alerts and recording rules use that this node can have. The busy node is
tests/bench/series_budget.py's, which prints the same figures beside node_exporter's."""
import os
import re
import sys
import unittest

from harness import REPO, Daemon, V1_MEMORY, parse_exposition, wait_for_samples

sys.path.insert(0, os.path.join(REPO, "tests", "bench"))
import series_budget  # noqa: E402

BUDGET = 3000
CGROUPS = 2000
# Families only memdiagd.exe exports (exporters/prometheus/system_memory_metrics.cpp, Windows).
WINDOWS_ONLY = {
    "memdiag_commit_charge_bytes", "memdiag_commit_limit_bytes", "memdiag_commit_peak_bytes", "memdiag_kernel_pool_bytes",
    "memdiag_low_memory", "memdiag_low_memory_signals_total", "memdiag_memory_load_ratio",
    "memdiag_paging_hard_faults_total", "memdiag_paging_page_faults_total", "memdiag_paging_pages_input_total",
    "memdiag_paging_pages_output_total", "memdiag_process_page_faults_total", "memdiag_process_working_set_bytes",
    "memdiag_process_working_set_peak_bytes", "memdiag_system_cache_bytes", "memdiag_system_handles",
    "memdiag_system_processes", "memdiag_system_threads"}
# Exported only while a falling trend forecasts exhaustion (docs/verdicts.md "Stall verdict"): a calm node has none.
ONLY_WITH_A_TREND = {"memdiag_forecast_exhaustion_seconds", "memdiag_cgroup_forecast_exhaustion_seconds",
                     "memdiag_overcommit_exhaustion_seconds"}


def used_families():
    """Every memdiag_ name the shipped dashboards, alerts and recording rules use."""
    names = set()
    for directory, ext in (("grafana", ".json"), ("prometheus", ".yml")):
        base = os.path.join(REPO, "deploy", directory)
        for name in os.listdir(base):
            if name.endswith(ext) and not name.endswith(".test.yml"):
                with open(os.path.join(base, name)) as f:
                    names |= set(re.findall(r"\bmemdiag_[a-z0-9_]+", f.read()))
    # A name ending in "_" is the start of a regular expression on __name__, not a family.
    return {re.sub(r"_(bucket|sum|count)$", "", n) for n in names if not n.endswith("_")}


@unittest.skipUnless(os.geteuid() == 0 and os.path.exists(V1_MEMORY + "/memory.limit_in_bytes"),
                     "needs root and the v1 memory hierarchy")
class SeriesBudget(unittest.TestCase):
    def test_a_busy_node_at_the_defaults_stays_within_the_budget(self):
        node = series_budget.BusyNode(CGROUPS)
        try:
            with Daemon("--config", os.path.join(REPO, "deploy", "memdiagd.yaml")) as d:
                d.wait_ready(timeout=60)
                samples = wait_for_samples(d, count=3)
                text = d.scrape()
        finally:
            node.close()
        families = {}
        for (name, _), _ in samples.items():
            base = re.sub(r"_(bucket|sum|count)$", "", name)
            families[base] = families.get(base, 0) + 1
        report = "%d samples, %d kB; largest: %s" % (
            len(samples), len(text.encode()) // 1000,
            ", ".join("%s %d" % kv for kv in sorted(families.items(), key=lambda kv: -kv[1])[:8]))
        print("\n" + report)
        discovered = sum(v for (name, _), v in samples.items() if name == "memdiag_cgroups_discovered")
        self.assertGreaterEqual(discovered, CGROUPS, report)
        self.assertLess(len(samples), BUDGET, report)
        # The cap is what keeps it there: the rest of the cgroups are counted, not exported.
        self.assertGreater(samples[("memdiag_cgroups_dropped", "")], CGROUPS - 200)
        # Nothing the dashboards, alerts and recording rules read is lost on this node: every
        # family they use is announced (a verdict family with no cgroup stalling has no sample
        # yet, but its HELP and TYPE are there).
        announced = set(re.findall(r"^# TYPE (\S+) ", text, re.M))
        missing = sorted(n for n in used_families() - WINDOWS_ONLY - ONLY_WITH_A_TREND if n not in announced)
        self.assertEqual(missing, [], "used by deploy/ but not exported on a busy node at the defaults")


if __name__ == "__main__":
    unittest.main()
