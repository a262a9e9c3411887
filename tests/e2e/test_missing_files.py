# SPDX-License-Identifier: Apache-2.0
"""A source whose file is missing is down, says why once, and is up at the next sample after
the file appears, without a restart (docs/operations.md: "a missing file is looked for again every
sample"). The real daemon on a copy of a fixture /proc tree (--path.procfs) that lacks
meminfo; the test makes it appear and watches sample counts, not the clock."""
import os
import shutil
import tempfile
import unittest

from harness import FIXTURES, Daemon, wait_for

CONFIG = """sampler: {interval: 100ms}
sources:
  cgroup: {enabled: false}
  processes: {enabled: false}
  reclaim_stall: {enabled: false}
  canary: {enabled: false}
"""


def fixture_mem_total_bytes():
    with open(os.path.join(FIXTURES, "kernel-6.18", "proc", "meminfo")) as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no MemTotal in the fixture")


class MissingFile(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="memdiag-e2e-missing-")
        self.proc = os.path.join(self.tmp, "proc")
        shutil.copytree(os.path.join(FIXTURES, "kernel-6.18", "proc"), self.proc)
        os.unlink(os.path.join(self.proc, "meminfo"))
        self.config = os.path.join(self.tmp, "memdiagd.yaml")
        with open(self.config, "w") as f:
            f.write(CONFIG)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_a_file_that_appears_is_read_at_the_next_sample(self):
        with Daemon("--config", self.config, "--path.procfs", self.proc) as d:
            d.wait_ready()

            def samples_total(s):
                return s[("memdiag_sampler_samples_total", "")]

            s = d.samples()
            self.assertEqual(s[("memdiag_source_up", '{source="meminfo"}')], 0)
            self.assertFalse([k for k in s if k[0].startswith("memdiag_meminfo_")])
            for other in ("vmstat", "pressure", "vm_sysctl"):
                self.assertEqual(s[("memdiag_source_up", '{source="%s"}' % other)], 1, other)
            # Several samples go by: the reason is in the log once, naming the file.
            start = samples_total(s)
            self.assertTrue(wait_for(lambda: samples_total(d.samples()) >= start + 5))
            log = d.logs()
            said = [l for l in log.splitlines() if "source meminfo" in l]
            self.assertEqual(len(said), 1, log)
            self.assertIn(os.path.join(self.proc, "meminfo"), said[0])

            # The file appears (whole, at once, as procfs files do).
            staging = os.path.join(self.tmp, "meminfo.new")
            shutil.copyfile(os.path.join(FIXTURES, "kernel-6.18", "proc", "meminfo"), staging)
            os.rename(staging, os.path.join(self.proc, "meminfo"))
            appeared_at = samples_total(d.samples())
            # The sample in progress may have looked already; the one after it must see it.
            self.assertTrue(wait_for(lambda: samples_total(d.samples()) >= appeared_at + 2))
            s = d.samples()
            self.assertEqual(s[("memdiag_source_up", '{source="meminfo"}')], 1)
            self.assertEqual(s[("memdiag_meminfo_mem_total_bytes", "")], fixture_mem_total_bytes())
            self.assertEqual(d.proc.poll(), None, "the daemon was not restarted")
            log = d.logs()
            self.assertEqual(log.count("source meminfo is back up"), 1, log)
            self.assertEqual(d.stop(), 0)


if __name__ == "__main__":
    unittest.main()
