# SPDX-License-Identifier: Apache-2.0
"""The cgroup source against real cgroups on this machine (v1 memory + cgroup2 for PSI): a
64 MiB memory cgroup, a page-cache workload that makes it reclaim, and one that gets
OOM-killed, checked through the real daemon's /metrics. Skipped, loudly, where the machine has
no v1 memory hierarchy (the v2 side is covered by the fixture tree in the unit tests)."""
import os
import shutil
import tempfile
import time
import unittest

from harness import V1_MEMORY as V1, Daemon, V1Cgroup, wait_for, write

LIMIT = 64 << 20


@unittest.skipUnless(os.path.exists(V1 + "/memory.limit_in_bytes") and os.geteuid() == 0,
                     "needs root and a cgroup v1 memory hierarchy")
class RealV1Cgroup(unittest.TestCase):
    def setUp(self):
        self.name = "memdiag-e2e-%d" % os.getpid()
        self.cgroup = V1Cgroup(self.name, LIMIT)
        self.addCleanup(self.cgroup.remove)
        self.path, self.v1, self.v2 = self.cgroup.path, self.cgroup.v1, self.cgroup.v2
        self.tmp = tempfile.mkdtemp(prefix="memdiag-cg-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.config = os.path.join(self.tmp, "memdiagd.yaml")
        write(self.config, "sampler: {interval: 200ms}\n"
                           "sources:\n  cgroup: {include: [\"/%s\"], max_depth: 2}\n" % self.name)

    def run_in_cgroup(self, script, timeout=60):
        """Runs a shell script inside the v1 cgroup and its cgroup2 twin."""
        return self.cgroup.run(script, timeout)

    def value(self, d, name, extra=""):
        key = (name, '{cgroup="%s"%s}' % (self.path, extra))
        return d.samples().get(key)

    def test_reclaim_oom_and_pressure_of_a_real_cgroup(self):
        with Daemon("--config", self.config) as d:
            d.wait_ready()
            self.assertEqual(self.value(d, "memdiag_cgroup_memory_limit_bytes"), LIMIT)
            self.assertEqual(d.samples()[("memdiag_cgroups_discovered", '{mode="%s"}' % ("hybrid" if self.v2 else "v1"))], 1)

            # Page cache three times the limit, written then read back: memcg reclaim, failcnt grows.
            data = os.path.join(self.tmp, "data")
            p = self.run_in_cgroup("dd if=/dev/zero of=%s bs=1M count=192 status=none && cat %s > /dev/null"
                                   % (data, data))
            self.assertEqual(p.returncode, 0, p.stderr)
            failcnt = wait_for(lambda: self.value(d, "memdiag_cgroup_memory_failcnt_total"))
            self.assertGreater(failcnt, 0)
            usage = self.value(d, "memdiag_cgroup_memory_usage_bytes")
            self.assertGreater(usage, LIMIT // 2)  # the cache stays charged, near the limit
            self.assertLessEqual(usage, LIMIT)
            self.assertGreaterEqual(self.value(d, "memdiag_cgroup_memory_headroom_bytes"), 0)
            with open(os.path.join(self.v1, "memory.failcnt")) as f:
                self.assertGreaterEqual(int(f.read()), failcnt)  # the daemon never runs ahead of the kernel
            # memory.pressure_level "low" fired through the eventfd while the cache was reclaimed
            self.assertEqual(d.samples()[("memdiag_cgroups_watched", "")], 1)
            low = wait_for(lambda: self.value(d, "memdiag_cgroup_pressure_events_total", ',level="low"'))
            self.assertGreater(low, 0)

            # An anonymous workload of 3x the limit: the OOM killer takes it.
            p = self.run_in_cgroup("exec python3 -c 'b = bytearray(192 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1'")
            self.assertNotEqual(p.returncode, 0)
            oom = wait_for(lambda: self.value(d, "memdiag_cgroup_memory_events_total", ',event="oom_kill"'))
            self.assertGreaterEqual(oom, 1)
            notified = wait_for(lambda: self.value(d, "memdiag_cgroup_oom_notifications_total"))
            self.assertGreaterEqual(notified, 1)  # the memory.oom_control eventfd saw it too

            if self.v2:  # hybrid: PSI of the cgroup2 twin
                stall = wait_for(lambda: self.value(d, "memdiag_cgroup_pressure_stall_seconds_total", ',kind="some"'))
                self.assertGreater(stall, 0)
            self.assertEqual(d.stop(), 0)


if __name__ == "__main__":
    unittest.main()
