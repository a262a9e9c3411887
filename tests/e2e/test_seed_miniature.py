# SPDX-License-Identifier: Apache-2.0
"""The training-node seed in miniature, real, on this machine: three jobs in memory
cgroups under one parent with a 640 MiB limit, each re-reading its own file, one of them also
growing anonymous memory much faster, until the parent is at its limit and the readers' page
cache is evicted under them. The real daemon (sampling every 500 ms) must raise the parent's
stall level within 3 s of the parent's stall starting (the kernel's own PSI of its cgroup2
twin, polled every 50 ms; the latency is printed), rank the grower first among the contributors
and the readers as victims (in its metrics, and in the dashboard's roles, relief and shortfall
panels as a real Prometheus scraping it evaluates them), log the parent's rise once with its top
contributor, name it in `memdiagd diagnose` (JSON and text), and bring the level back to none
after the jobs end.
"""
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
import unittest

from harness import MEMDIAGD, UNIFIED, Daemon, V1Cgroup, V1_MEMORY, wait_for_calm_memory, wait_until
from test_prometheus import (DASHBOARD, STALLING_SCOPE_SERIES, dashboard_targets, expand, grafana_values, labels_shown,
                             query, run_prometheus)

MiB = 1 << 20
LIMIT = 640 * MiB
FILE = 150 * MiB      # each reader's file: both fit beside each other, not beside the grower
GROW_TO = 480 * MiB   # the grower's anonymous memory: with it, the readers' files no longer fit

GROWER = r"""
import sys, time
chunks = []
target, step = int(sys.argv[1]), 16 << 20
while sum(len(c) for c in chunks) < target:
    chunks.append(bytearray(b"x" * step))   # written: charged now, and not reclaimable (no swap)
    time.sleep(0.05)                        # ~320 MiB/s: much faster than anything else here
print("grown", flush=True)
while True:
    time.sleep(1)
"""


def psi_some_total_us(cgroup_dir):
    with open(os.path.join(cgroup_dir, "memory.pressure")) as f:
        for line in f:
            if line.startswith("some "):
                return int(line.split("total=")[1])
    raise AssertionError("no some line in %s/memory.pressure" % cgroup_dir)


def labelled(samples, name, cgroup):
    """{labels: value} of `name`'s samples for `cgroup`."""
    needle = 'cgroup="%s"' % cgroup
    return {labels: v for (n, labels), v in samples.items() if n == name and needle in labels}


@unittest.skipUnless(os.geteuid() == 0 and os.path.isdir(V1_MEMORY) and os.path.isdir(UNIFIED),
                     "needs root, a v1 memory hierarchy and its cgroup2 twin (PSI per cgroup)")
class SeedInMiniatureTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="memdiag-seed-", dir="/var/tmp")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.parent_name = "memdiag-e2e-seed-%d" % os.getpid()
        self.parent = V1Cgroup(self.parent_name, LIMIT)
        self.addCleanup(self.parent.remove)
        self.jobs = {}
        for job in ("reader1", "reader2", "grower"):
            cg = V1Cgroup("%s/%s" % (self.parent_name, job), None)
            self.addCleanup(cg.remove)  # children first: cleanups run in reverse
            self.jobs[job] = cg
        self.workers = []
        self.addCleanup(self.stop_workers)

    def stop_workers(self):
        for w in self.workers:
            if w.poll() is None:
                w.kill()
            w.wait()
        self.workers = []

    def start(self, job, script, *args):
        w = subprocess.Popen(["sh", "-c", self.jobs[job].shell(script), *args], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True)
        self.workers.append(w)
        return w

    def path(self, job=None):
        return "/" + self.parent_name + ("/" + job if job else "")

    def test_the_grower_is_named_the_readers_are_victims_and_it_is_said_within_3s(self):
        for reader in ("reader1", "reader2"):
            # O_DIRECT: written around the page cache, so nothing is charged to this test's cgroup.
            subprocess.run(["dd", "if=/dev/zero", "of=" + os.path.join(self.tmp, reader), "bs=1M",
                            "count=%d" % (FILE // MiB), "oflag=direct", "status=none"], check=True)
        wait_for_calm_memory(below=2.0)
        config = os.path.join(self.tmp, "memdiagd.yaml")
        with open(config, "w") as f:
            f.write("sampler: {interval: 500ms, ring: 240}\n")
        with Daemon("--config", config) as d:
            d.wait_ready()
            # A real Prometheus scraping it, for the dashboard panels that need a stalling scope
            # (test_prometheus.py leaves them to this test).
            prom, prom_port, prom_log = run_prometheus(self.tmp, d.address)
            self.addCleanup(lambda: (prom.kill(), prom.wait()))
            parent = self.path()
            wait_until(lambda: labelled(d.samples(), "memdiag_cgroup_stall_level", parent).get(
                '{cgroup="%s"}' % parent) == 0, 30, "the parent judged as a scope, calm")

            for reader in ("reader1", "reader2"):
                self.start(reader, 'while true; do cat "$0" > /dev/null; done', os.path.join(self.tmp, reader))
            # The readers' files now fit in the parent's page cache: let them settle before the
            # grower comes, so the stall that follows is the grower's doing.
            time.sleep(3)
            twin = UNIFIED + parent
            base = psi_some_total_us(twin)
            started = {}
            stop_watch = threading.Event()

            def watch():
                while not stop_watch.is_set():
                    if psi_some_total_us(twin) > base:
                        started["at"] = time.monotonic()
                        return
                    time.sleep(0.05)
            watcher = threading.Thread(target=watch)
            watcher.start()
            try:
                grower = self.start("grower", 'exec python3 -c "$0" "$1"', GROWER, str(GROW_TO))
                raised = wait_until(lambda: (lambda s: s if labelled(s, "memdiag_cgroup_stall_level", parent).get(
                    '{cgroup="%s"}' % parent, 0) >= 1 else None)(d.samples()), 60, "the parent's stall level to rise")
                raised_at = time.monotonic()
            finally:
                stop_watch.set()
                watcher.join()
            self.assertIn("at", started, "the jobs never made the parent's PSI move")
            latency = raised_at - started["at"]
            print("\nparent's stall level rose %.2f s after its PSI some began to move" % latency)
            self.assertLess(latency, 3.0)

            # While the grower holds its memory the readers thrash. Wait for the roles to settle
            # (the growth EMA warms up over seconds), then: the grower first, the readers victims.
            def roles():
                s = d.samples()
                out = {}
                for job in ("reader1", "reader2", "grower"):
                    for labels, v in labelled(s, "memdiag_cgroup_pressure_role", self.path(job)).items():
                        if v == 1:
                            out[job] = re.search(r'role="(\w+)"', labels).group(1)
                return out if len(out) == 3 else None
            seen = wait_until(roles, 60, "all three jobs to have a role")
            self.assertEqual(seen, {"grower": "contributor", "reader1": "victim", "reader2": "victim"})
            s = d.samples()
            ratio = {job: labelled(s, "memdiag_cgroup_contribution_ratio", self.path(job)) for job in self.jobs}
            grower_ratio = list(ratio["grower"].values())[0]
            self.assertTrue(all(grower_ratio > list(ratio[r].values())[0] for r in ("reader1", "reader2")), ratio)

            # The dashboard's panels of roles, relief and shortfall, as Prometheus evaluates them:
            # each returns data with the labels it shows; the roles panel names the grower a
            # contributor and the readers victims in the parent's scope, the relief panel the
            # grower's relief.
            with open(DASHBOARD) as f:
                dashboard = json.load(f)
            targets = [(title, t) for title, t in dashboard_targets(dashboard)
                       if any(series in t["expr"] for series in STALLING_SCOPE_SERIES)]
            self.assertGreaterEqual(len(targets), 3)
            # As Grafana fills them in with this node and the scrape job chosen (the cluster at All).
            variables = grafana_values(dashboard, {"job": "memdiag", "instance": d.address})

            def evaluated():
                out = {}
                for title, target in targets:
                    try:
                        result = query(prom_port, expand(self, title, target["expr"], variables))
                    except OSError:
                        return None  # Prometheus still starting
                    if not result:
                        return None
                    out[target["expr"]] = (title, target, result)
                return out
            panels = wait_until(evaluated, 30, "every stalling-scope panel to return data in Prometheus")
            for title, target, result in panels.values():
                for series in result:
                    for label in labels_shown(target):
                        self.assertTrue(series["metric"].get(label), (title, series["metric"], label))
                by_cgroup = {s["metric"]["cgroup"]: s for s in result}
                if "memdiag_cgroup_contribution_ratio" in target["expr"]:
                    self.assertEqual(by_cgroup[self.path("grower")]["metric"]["role"], "contributor", result)
                    self.assertEqual(by_cgroup[self.path("grower")]["metric"]["scope"], parent, result)
                    for reader in ("reader1", "reader2"):
                        self.assertEqual(by_cgroup[self.path(reader)]["metric"]["role"], "victim", result)
                elif "memdiag_cgroup_relief_bytes" in target["expr"]:
                    # The node's own level rises too (node PSI counts every stalled task), and
                    # names its own contributors among the node's leaf cgroups: only the parent's
                    # are this test's to check.
                    ours = {c for c in by_cgroup if c.startswith(parent + "/")}
                    self.assertEqual(ours, {self.path("grower")}, result)
                    self.assertEqual(by_cgroup[self.path("grower")]["metric"]["scope"], parent, result)
                    self.assertGreater(float(by_cgroup[self.path("grower")]["value"][1]), 300 * MiB)
                else:
                    self.assertIn(parent, by_cgroup, (title, result))

            # The report, from the running daemon, names the scope, its contributor and victims.
            url = "http://%s/api/v1/diagnosis" % d.address
            out = subprocess.run([MEMDIAGD, "diagnose", "--url", url, "--format", "json"], capture_output=True,
                                 text=True, timeout=30)
            self.assertEqual(out.returncode, 0, out.stderr)
            report = json.loads(out.stdout)
            self.assertEqual(report["origin"], "daemon")
            scopes = {c["cgroup"]: c for c in report["cgroups"]}
            self.assertIn(parent, scopes, report["cgroups"])
            scope = scopes[parent]
            self.assertGreaterEqual(scope["level"]["value"], 1)
            self.assertEqual(scope["contributors"][0]["cgroup"], self.path("grower"), scope)
            self.assertEqual({v["cgroup"] for v in scope["victims"]}, {self.path("reader1"), self.path("reader2")})
            self.assertGreater(scope["contributors"][0]["relief_bytes"], 300 * MiB)
            # Beside the cgroups, the process: the grower's python3 (sh exec'd it, same pid).
            self.assertTrue(scope["processes"], scope)
            self.assertEqual(scope["processes"][0]["pid"], grower.pid, scope["processes"])
            self.assertEqual(scope["processes"][0]["cgroup"], self.path("grower"), scope["processes"])
            self.assertGreater(scope["processes"][0]["relief_bytes"], 300 * MiB)
            self.assertTrue(any(step.startswith("The process pressing most on cgroup %s: pid %d (python3"
                                                % (parent, grower.pid)) for step in report["next_steps"]),
                            report["next_steps"])
            self.assertTrue(any(step.startswith("Stop or limit " + self.path("grower")) for step in report["next_steps"]),
                            report["next_steps"])
            text = subprocess.run([MEMDIAGD, "diagnose", "--url", url], capture_output=True, text=True, timeout=30)
            self.assertEqual(text.returncode, 0, text.stderr)
            self.assertIn("CGROUP STALL:", text.stdout)
            self.assertIn(self.path("grower"), text.stdout)
            self.assertTrue(all(len(line) <= 80 and not line.endswith(" ") for line in text.stdout.splitlines()),
                            text.stdout)

            self.stop_workers()
            ended = time.monotonic()
            wait_until(lambda: labelled(d.samples(), "memdiag_cgroup_stall_level", parent).get(
                '{cgroup="%s"}' % parent) == 0, 60, "the parent's level to fall back to none")
            fell = time.monotonic() - ended
            print("parent back to none %.1f s after the jobs ended" % fell)
            self.assertLess(fell, 30.0)

            # The parent's transitions, each logged once: the first leaves none naming the grower,
            # the last returns to none, consecutive lines chain.
            lines = [l for l in d.logs().splitlines() if "cgroup stall " in l and "cgroup=%s " % parent in l]
            changes = [re.search(r"cgroup stall (\w+) -> (\w+):", l).groups() for l in lines]
            self.assertGreaterEqual(len(changes), 2, d.logs())
            self.assertEqual(changes[0][0], "none")
            self.assertEqual(changes[-1][1], "none")
            for (_, a_to), (b_from, _) in zip(changes, changes[1:]):
                self.assertEqual(a_to, b_from, changes)
            self.assertEqual(sum(1 for c in changes if c[0] == "none"), 1, changes)
            rising = [l for l in lines if re.search(r"cgroup stall \w+ -> \w+:", l) and "contributors=" in l]
            self.assertTrue(any("contributors=%s:" % self.path("grower") in l for l in rising), lines)


if __name__ == "__main__":
    unittest.main()
