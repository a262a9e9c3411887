# SPDX-License-Identifier: Apache-2.0
"""The fleet view on one real Prometheus scraping three real memdiagd daemons on
distinct loopback ports, each its own `instance`, with the shipped alert and recording rules
(deploy/prometheus/memdiag-recording.yml) loaded:
- a stalling node: the fixture tree of test_status_page.py (tests/fixtures/cgroup-v2 with
  kernel-6.18's vmstat, PSI and sysctls), whose node PSI, vmstat and one container's PSI advance
  every 100 ms, and here also its meminfo (MemAvailable falling 64 MiB/s, Committed_AS at 40 GiB:
  overcommit risk high and both forecasts) and a burstable pod and its container (PSI rising,
  usage growing toward an 8 GiB limit: a stalling cgroup scope with a member, and its forecast);
- a calm node of another kernel: the kernel-5.4 fixture (no cgroup hierarchy, so its cgroup
  source is down; its processes read from the fixture);
- this machine, as it is (eBPF, processes, the canary).
Checked against Prometheus' answers: "which nodes stall" (the fleet dashboard's panel) returns
exactly the stalling node; every query of memdiag-fleet.json returns data with the labels it
shows, the per-node panels one series per node that has the data (EXPECTED); the workloads it
names across nodes are the fixture's contributors (the node's covering set, the pod's
container) and victim, by pod UID and unit; every
recording rule produces series and evaluates without error; the queries the single-node test
(test_prometheus.py) cannot give data (ONLY_WHILE: roles, forecasts) return data for the
stalling node here; and the stall alert is pending on it with its reason as a label.
"""
import os
import shutil
import tempfile
import time
import unittest

from harness import FIXTURES, Daemon, write
from test_prometheus import (DASHBOARDS, FLEET_DASHBOARD, RECORDING, RULES, WINDOWS_DASHBOARD, api, assert_labels,
                             dashboard_targets, expand, labels_shown, load_dashboard, only_while, query,
                             recording_rules, run_prometheus, template_values)
from test_status_page import MARKUP_CGROUP, StallingTree

GiB = 1 << 30
MiB = 1 << 20
DEADLINE = 60  # seconds for everything the test waits on


class FleetStallingTree(StallingTree):
    """StallingTree, and every 100 ms also: the node's meminfo (MemAvailable from 16 GiB down
    64 MiB/s as AnonPages grows as much, Committed_AS 40 GiB: more promised than can be supplied,
    drawn at that rate), and a burstable pod and its container (limits raised to 8 GiB) whose
    memory PSI rises (some 40 %), usage grows 64 MiB/s from 1 GiB and the pod's limit is hit
    (memory.events max, 50 a second): a cgroup stalling at its own limit, whose stall is its own.
    Rewritten in place at a fixed length, as the daemon rereads its open files from offset 0."""
    POD = ("kubepods.slice/kubepods-burstable.slice/"
           "kubepods-burstable-pod6f1c2a4e_8b3d_4c2e_9f10_1234567890ab.slice")
    CONTAINER = POD + "/cri-containerd-0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9.scope"
    POD_UID = "6f1c2a4e-8b3d-4c2e-9f10-1234567890ab"
    MEMINFO = (("MemAvailable:   24353680 kB", "MemAvailable:   %08d kB"),
               ("AnonPages:          7096 kB", "AnonPages:      %08d kB"),
               ("Committed_AS:      49352 kB", "Committed_AS:   %08d kB"))

    def write(self, seconds, create=False):
        super().write(seconds, create)
        cgroups = os.path.join(self.root, "sys", "fs", "cgroup")
        meminfo = os.path.join(self.root, "proc", "meminfo")
        if create:
            with open(meminfo) as f:
                self.meminfo_text = f.read()
            for line, _ in self.MEMINFO:
                assert line in self.meminfo_text, line
            for scope in (self.POD, self.CONTAINER):
                write(os.path.join(cgroups, scope, "memory.max"), "%d\n" % (8 * GiB))
        drawn = int(seconds * 64 * MiB)
        text = self.meminfo_text
        for (line, shape), kib in zip(self.MEMINFO, ((16 * GiB - drawn) // 1024, (4 * GiB + drawn) // 1024,
                                                     40 * GiB // 1024)):
            text = text.replace(line, shape % kib)
        self.put(meminfo, text, create)
        for scope in (self.POD, self.CONTAINER):
            self.put(os.path.join(cgroups, scope, "memory.pressure"),
                     self.psi(99000000 + int(seconds * 0.4e6), 66000000 + int(seconds * 0.1e6)), create)
            self.put(os.path.join(cgroups, scope, "memory.current"), "%012d\n" % (GiB + drawn), create)
        self.put(os.path.join(cgroups, self.POD, "memory.events"),
                 "low 0\nhigh 12\nmax %012d\noom 3\noom_kill 1\noom_group_kill 0\n" % (340 + int(seconds * 50)), create)


# The fleet panels showing one series per node (legend {{instance}}): which nodes must be there.
# "stalling", "calm" (the kernel-5.4 fixture) and "here" (this machine); a set with "here?" means
# this machine may or may not be there (it depends on what runs on it).
EVERY_NODE = {"stalling", "calm", "here"}
EXPECTED = {
    "Which nodes stall: worst level within 5 min (medium or worse)": {"stalling"},
    "Stall level of every node (the 20 worst within 5 min)": EVERY_NODE,
    "Stall reasons by node (within 5 min)": {"stalling", "here?"},
    "Memory PSI some by node (stall seconds per second, 1 min), the 10 highest": EVERY_NODE,
    # The calm fixture has no cgroup hierarchy (its cgroup source is down); this machine has it
    # only where some cgroup has a limit.
    "Cgroups stalling (medium or worse) per node": {"stalling", "here?"},
    "Overcommit risk per node (worst within 5 min), the 20 highest": EVERY_NODE,
    "Unbacked promise over supply per node, the 10 highest": EVERY_NODE,
    "Available memory per node (share of RAM), the 10 lowest": EVERY_NODE,
    "Commit charge over the commit limit per node (Linux and Windows), the 10 highest": EVERY_NODE,
    "OOM kills per node in 10 minutes, the 10 highest": EVERY_NODE,
    # The stalling fixture runs without the process source.
    "Map-count headroom: highest process share of vm.max_map_count per node, the 10 highest": {"calm", "here"},
    "Sources down per node": EVERY_NODE,
    "Samples per scrape per node (the series budget)": EVERY_NODE,
}
# The single values of the stat panels (all three nodes selected).
STATS = {"Nodes reporting": 3, "Nodes stalling (medium or worse within 5 min)": 1,
         "Nodes at overcommit risk (medium or worse within 5 min)": 1}


class FleetOfThreeDaemons(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="memdiag-fleet-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def wait(self, what, predicate, detail=lambda: ""):
        """predicate()'s first truthy value, polled until the test's deadline; fails naming what
        (and detail(), and the last error a query met)."""
        error = None
        while time.monotonic() < self.deadline:
            try:
                value = predicate()
                if value:
                    return value
            except OSError as e:
                error = e  # Prometheus not listening yet, or a query it refused
            time.sleep(0.25)
        self.fail("waited %d s for %s%s%s" % (DEADLINE, what, detail(), "; last error: %r" % error if error else ""))

    def daemon(self, name, config, *flags):
        path = os.path.join(self.tmp, name + ".yaml")
        write(path, config)
        d = Daemon("--config", path, *flags)
        self.addCleanup(d.close)
        return d

    def test_one_prometheus_three_daemons(self):
        self.deadline = time.monotonic() + DEADLINE
        tree = FleetStallingTree(os.path.join(self.tmp, "stalling"))
        self.addCleanup(tree.stop)
        stalling = self.daemon("stalling",
                               "sources:\n  processes: {enabled: false}\n  reclaim_stall: {enabled: false}\n"
                               "  canary: {enabled: false}\n"
                               # a 10 s trend: the forecasts within the test, from 5 s of samples
                               "diagnosis:\n  forecast: {window: 10s}\n",
                               "--path.procfs", os.path.join(tree.root, "proc"),
                               "--path.sysfs", os.path.join(tree.root, "sys"))
        calm = self.daemon("calm",
                           "sources:\n  reclaim_stall: {enabled: false}\n  canary: {enabled: false}\n"
                           "  processes: {scanner: procfs}\n",
                           "--path.procfs", os.path.join(FIXTURES, "kernel-5.4", "proc"))
        here = self.daemon("here", "sources:\n  canary: {interval: 2s}\n")
        for d in (stalling, calm, here):
            d.wait_ready()
        expected = dict(EXPECTED)
        if here.samples().get(("memdiag_source_up", '{source="pressure"}')) != 1:  # a kernel without PSI
            expected["Memory PSI some by node (stall seconds per second, 1 min), the 10 highest"] = {"stalling", "calm"}
        node = {stalling.address: "stalling", calm.address: "calm", here.address: "here"}
        instance = {v: k for k, v in node.items()}
        prom, port, log = run_prometheus(self.tmp, [stalling.address, calm.address, here.address], [RULES, RECORDING])
        self.addCleanup(lambda: (prom.kill(), prom.wait()))
        self.wait("Prometheus to scrape the three daemons", lambda: len(query(port, 'up{job="memdiag"} == 1')) == 3,
                  lambda: "; up: %s" % query(port, "up"))

        fleet = load_dashboard(FLEET_DASHBOARD)
        # All nodes (instance .*), the scrape job chosen (every series must carry it).
        variables = template_values(self, port, fleet, instances=3, selected={"job": "memdiag"})
        targets = [(title, t, expand(self, title, t["expr"], variables)) for title, t in dashboard_targets(fleet)]
        self.assertTrue(set(EXPECTED) | set(STATS) <= {title for title, _, _ in targets},
                        "panels this test expects are gone: %s" % sorted(set(EXPECTED) | set(STATS) -
                                                                        {title for title, _, _ in targets}))

        # --- which nodes stall: exactly the stalling one ---
        which = next(expr for title, _, expr in targets if title.startswith("Which nodes stall"))

        def only_the_stalling_node():
            result = query(port, which)
            return result if {s["metric"]["instance"] for s in result} == {stalling.address} else None
        stalls = self.wait("'which nodes stall' to return exactly the stalling node", only_the_stalling_node,
                           lambda: "; it returns %s" % [(node.get(s["metric"]["instance"]), s["value"][1])
                                                       for s in query(port, which)])
        self.assertGreaterEqual(float(stalls[0]["value"][1]), 3)  # high: PSI some 40 %

        # --- every fleet panel ---
        results = {}

        def every_fleet_panel_has_data():
            for title, target, expr in targets:
                if not results.get(expr):
                    results[expr] = query(port, expr)
            return all(results[expr] for _, _, expr in targets)
        self.wait("every fleet panel to return data", every_fleet_panel_has_data,
                  lambda: "; none from: %s" % [title for title, _, expr in targets if not results.get(expr)])
        # Once more now that every record exists, for the panels compared across nodes.
        for title, target, expr in targets:
            with self.subTest(panel=title):
                result = self.wait("%r to have its nodes (%s)" % (title, sorted(expected.get(title, ["any"]))),
                                   lambda: self.nodes_as_expected(query(port, expr), expected.get(title), node),
                                   lambda: "; it has %s" % sorted(node.get(s["metric"].get("instance"), "-")
                                                                  for s in query(port, expr)))
                assert_labels(self, title, target, result)
                shown = sorted(node.get(s["metric"].get("instance"), "-") for s in result)
                nodes = ", nodes %s" % shown if "instance" in labels_shown(target) else ""
                print("fleet panel %r: %d series%s" % (title, len(result), nodes))
                if title in STATS:
                    self.assertEqual(float(result[0]["value"][1]), STATS[title], title)

        # --- the workloads it names across nodes ---
        def workloads(role):
            start = "Workloads contributing: on how many" if role == "contributor" else "Victims"
            expr = next(expr for title, _, expr in targets if title.startswith(start))
            return {s["metric"]["workload"]: float(s["value"][1]) for s in query(port, expr)}
        # The node, short of memory, names the smallest set whose relief covers its shortfall,
        # largest first: the markup unit (the other 1 GB holder is "similar"); the burstable pod,
        # at its own limit, names its container.
        contributors = workloads("contributor")
        self.assertEqual(contributors, {"unit/system.slice": 1, "pod/" + FleetStallingTree.POD_UID: 1}, contributors)
        self.assertEqual(workloads("victim").get("pod/0d2c9e7a-1111-2222-3333-444455556666"), 1)
        table = query(port, 'memdiag:cgroup_contribution_ratio:workload{instance="%s"}' % stalling.address)
        self.assertIn(("contributor", "/system.slice/" + MARKUP_CGROUP, "node"),
                      {(s["metric"]["role"], s["metric"]["cgroup"], s["metric"]["scope"]) for s in table})
        # The container is a member of its pod, the innermost stalling scope it is in.
        self.assertIn(("contributor", "/" + FleetStallingTree.CONTAINER, "/" + FleetStallingTree.POD),
                      {(s["metric"]["role"], s["metric"]["cgroup"], s["metric"]["scope"]) for s in table})
        stalled = query(port, 'memdiag:workload_cgroup_stall_level:max{workload="pod/%s"}' % FleetStallingTree.POD_UID)
        self.assertEqual([float(s["value"][1]) for s in stalled], [3])

        # --- every recording rule ---
        rules = [r for g in api(port, "rules")["groups"] for r in g["rules"]]
        self.assertEqual(sorted(r["name"] for r in rules if r["type"] == "recording"), sorted(recording_rules()))
        for record in recording_rules():
            with self.subTest(record=record):
                self.assertTrue(query(port, record), "record %s has no series" % record)
        for rule in rules:
            with self.subTest(rule=rule["name"]):
                self.assertEqual(rule["health"], "ok", rule)
                self.assertFalse(rule.get("lastError"), rule)
        self.assertEqual(query(port, "memdiag:nodes:count")[0]["value"][1], "3")
        self.assertEqual(query(port, "memdiag:nodes_stalling:count")[0]["value"][1], "1")
        self.assertEqual(query(port, "memdiag:nodes_overcommit_risk:count")[0]["value"][1], "1")

        # --- what the single-node test cannot give data: roles, forecasts ---
        for path in DASHBOARDS:
            if path in (FLEET_DASHBOARD, WINDOWS_DASHBOARD):
                continue
            dashboard = load_dashboard(path)
            # A per-node dashboard shows one node (its instance has no All): the stalling one.
            variables = template_values(self, port, dashboard, instances=3,
                                        selected={"job": "memdiag", "instance": stalling.address})
            for title, target in dashboard_targets(dashboard):
                if not only_while(target["expr"]):
                    continue
                expr = expand(self, title, target["expr"], variables)
                with self.subTest(dashboard=os.path.basename(path), panel=title, expr=target["expr"]):
                    result = self.wait("%s %r to return data for the stalling node" % (os.path.basename(path), title),
                                       lambda: (lambda r: r if stalling.address in {s["metric"].get("instance")
                                                                                     for s in r} else None)(
                                           query(port, expr)))
                    assert_labels(self, title, target, result)
                    print("%s panel %r: %d series on the stalling node" % (
                        os.path.basename(path), title,
                        sum(1 for s in result if s["metric"].get("instance") == stalling.address)))

        # --- the stall alert, pending on the stalling node with its reason ---
        pending = self.wait("MemdiagStalling pending on the stalling node", lambda: query(
            port, 'ALERTS{alertname="MemdiagStalling",instance="%s"}' % stalling.address))
        self.assertEqual({s["metric"].get("reason") for s in pending}, {"stall_time"}, pending)
        self.assertEqual(query(port, 'ALERTS{alertname=~"MemdiagStalling.*",instance="%s"}' % calm.address), [])
        with open(log) as f:
            self.assertNotIn("Error on ingesting", f.read())

    @staticmethod
    def nodes_as_expected(result, expected, node):
        """`result` when its series are the nodes `expected` (one series each), or no expectation."""
        if not result:
            return None
        if expected is None:
            return result
        shown = [node.get(s["metric"].get("instance")) for s in result]
        if len(shown) != len(set(shown)):
            return None
        must = {n for n in expected if not n.endswith("?")}
        may = must | {n.rstrip("?") for n in expected}
        return result if must <= set(shown) <= may else None


if __name__ == "__main__":
    unittest.main()
