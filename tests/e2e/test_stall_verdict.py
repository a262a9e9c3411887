# SPDX-License-Identifier: Apache-2.0
"""The stall verdict on a real stall, through the real daemon over HTTP: a task that keeps a
64 MiB memory cgroup at its limit with dirty pages (reclaim there waits for writeback) makes the
cgroup's PSI (its cgroup2 twin) and the node's rise within a second. The stall is the cgroup's,
at its own limit, on a node with memory to spare: the daemon, sampling every second as by
default, must raise the cgroup's level (memdiag_cgroup_stall_level) within 3 s of the first
stalled time its PSI shows (the latency is printed), name stall_time as a reason, keep the
node's level at none (the node is not short: it counts the cgroup as at its limit), log each
change of the cgroup's level once, and be back at none within 40 s of the workload's end (the
long window's 10 s, then the 10 s hold).

The stall's start is taken from the kernel's own `some total` (polled every 50 ms), not from
when the workload was started, so the figure is detection latency and not workload warm-up.
"""
import json
import os
import re
import shutil
import tempfile
import threading
import time
import unittest

from harness import (UNIFIED, Daemon, V1Cgroup, V1_MEMORY, http_get, node_pressure, start_dirty_writer,
                     wait_for_calm_memory, wait_until)


def some_total_us(path="/proc/pressure/memory"):
    with open(path) as f:
        for line in f:
            if line.startswith("some "):
                return int(line.split("total=")[1])
    raise AssertionError("no some line in /proc/pressure/memory")


@unittest.skipUnless(os.geteuid() == 0 and os.path.isdir(V1_MEMORY) and os.path.isdir(UNIFIED) and
                     os.path.exists("/proc/pressure/memory"),
                     "needs root, a v1 memory hierarchy, its cgroup2 twin (PSI per cgroup) and PSI")
class StallVerdictTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="memdiag-stall-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.cgroup = V1Cgroup("memdiag-e2e-stall-%d" % os.getpid(), 64 << 20)
        self.addCleanup(self.cgroup.remove)

    def start_dirty_writer(self, file_bytes):
        """harness.start_dirty_writer in this test's cgroup, killed at the end whatever happens."""
        worker = start_dirty_writer(self.cgroup, os.path.join(self.tmp, "data"), file_bytes)

        def stop():
            worker.kill()
            worker.wait()
        self.addCleanup(stop)
        return worker

    def test_a_cgroup_stall_raises_its_level_within_3s_the_node_stays_none_and_it_falls_back(self):
        wait_for_calm_memory(below=1.0)
        label = '{cgroup="%s"}' % self.cgroup.path
        with Daemon() as d:
            d.wait_ready()
            wait_until(lambda: d.samples().get(("memdiag_cgroup_stall_level", label)) == 0, 30,
                       "the cgroup judged as a scope, calm")

            # The stall's start, from the kernel: the first poll (every 50 ms) that sees the
            # cgroup's some total move at all.
            started = {}
            stop_watch = threading.Event()
            twin = self.cgroup.v2 + "/memory.pressure"

            def watch():
                base = some_total_us(twin)
                while not stop_watch.is_set():
                    if some_total_us(twin) > base:
                        started["at"] = time.monotonic()
                        return
                    time.sleep(0.05)
            watcher = threading.Thread(target=watch)
            watcher.start()
            worker = self.start_dirty_writer(128 << 20)
            node_levels, node_stall = [], {}

            def note_node_level(s):
                """Keeps the node's level, and the first time it is raised, the diagnosis's reasons:
                what the failure message needs to say why (a neighbour's pressure, or this cgroup
                counted at the node)."""
                node_levels.append(s.get(("memdiag_stall_level", "")))
                if node_levels[-1] and not node_stall:
                    status, body = http_get(d.port, "/api/v1/diagnosis")
                    stall = json.loads(body).get("stall", {}) if status == 200 else {}
                    node_stall.update(level=stall.get("level"), reasons=stall.get("reasons"))
            try:
                def risen():
                    s = d.samples()
                    note_node_level(s)
                    return s if s.get(("memdiag_cgroup_stall_level", label), 0) >= 1 else None
                raised = wait_until(risen, 60, "the cgroup's stall level to rise")
                raised_at = time.monotonic()
            finally:
                watcher.join(timeout=10)  # it has seen the stall by now, or will within a poll
                stop_watch.set()
                watcher.join()
            self.assertIn("at", started, "the workload never made the cgroup's PSI move")
            latency = raised_at - started["at"]
            print("\ncgroup stall detected %.2f s after its PSI some began to rise (level %d)" %
                  (latency, raised[("memdiag_cgroup_stall_level", label)]))
            self.assertLess(latency, 3.0)
            # The stall is at the cgroup's own limit: the node, with memory to spare, is calm and
            # counts the cgroup as at its limit.
            for _ in range(5):
                s = d.samples()
                note_node_level(s)
                if s.get(("memdiag_cgroups_at_limit", ""), 0) >= 1:
                    break
                time.sleep(0.5)
            self.assertGreaterEqual(s.get(("memdiag_cgroups_at_limit", ""), 0), 1)
            self.assertEqual(max(node_levels), 0, "the node's level while one cgroup stalls at its limit: %s" % node_stall)

            worker.kill()
            worker.wait()
            ended = time.monotonic()
            wait_until(lambda: d.samples().get(("memdiag_cgroup_stall_level", label)) == 0, 60,
                       "the level to fall back to none")
            fell = time.monotonic() - ended
            print("back to none %.1f s after the workload ended (node PSI some avg10 now %s %%)" %
                  (fell, node_pressure()))
            self.assertLess(fell, 40.0)

            # Each change logged once: consecutive transition lines never repeat a change, the
            # first leaves none and the last returns to it.
            changes = re.findall(r"cgroup stall (\w+) -> (\w+): cgroup=%s " % re.escape(self.cgroup.path), d.logs())
            self.assertGreaterEqual(len(changes), 2, d.logs())
            self.assertEqual(changes[0][0], "none")
            self.assertEqual(changes[-1][1], "none")
            for (a_from, a_to), (b_from, b_to) in zip(changes, changes[1:]):
                self.assertEqual(a_to, b_from, "transitions out of order: %s" % changes)
            self.assertTrue(all(f != t for f, t in changes), changes)
            self.assertIn("stall_time=", d.logs())
            self.assertNotIn("stall level none ->", d.logs(), "the node's level never moved")


if __name__ == "__main__":
    unittest.main()
