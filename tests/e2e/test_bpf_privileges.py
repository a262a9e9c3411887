# SPDX-License-Identifier: Apache-2.0
"""Without CAP_BPF and CAP_PERFMON (docs/operations.md, "What the sources need"): the reclaim-stall source is down, the
reason ("permission denied loading BPF ...") is logged once, the load is not tried again within
the minute, and every other source keeps working. The real daemon, started as root with those
capabilities (and CAP_SYS_ADMIN, which would stand in for them) dropped from its bounding set by
capsh, so the kernel refuses its bpf() calls. After its first sample (the first attempt, whose
reason the log shows), strace follows its threads and counts the bpf() calls of 40 more samples:
none, since the next attempt is a minute away (the minute itself is a unit test with a clock of
its own, ReclaimStallSource.AFailedLoadIsRetriedAtMostOnceAMinute)."""
import os
import shutil
import signal
import subprocess
import tempfile
import unittest

import harness
from harness import Daemon, wait_for

CONFIG = """sampler: {interval: 100ms}
sources:
  processes: {enabled: false}   # its task iterator is eBPF too: only reclaim_stall may call bpf()
"""


class DroppedCapsDaemon(Daemon):
    """memdiagd run as capsh --drop=... -- -c 'exec memdiagd ...': every step execs, so the
    process the test started is the daemon itself (signals, exit code, death with the test)."""

    def __init__(self, tmp, *args):
        real = harness.MEMDIAGD
        wrapper = os.path.join(tmp, "memdiagd-without-bpf-caps")
        with open(wrapper, "w") as f:
            f.write("#!/bin/sh\nexec capsh --drop=cap_bpf,cap_perfmon,cap_sys_admin "
                    "-- -c 'exec \"$0\" \"$@\"' %s \"$@\"\n" % real)
        os.chmod(wrapper, 0o755)
        harness.MEMDIAGD = wrapper
        try:
            super().__init__(*args)
        finally:
            harness.MEMDIAGD = real


@unittest.skipUnless(os.geteuid() == 0, "needs root (to drop capabilities it has)")
@unittest.skipUnless(shutil.which("capsh") and shutil.which("strace"), "needs capsh and strace")
class WithoutBpfCapabilities(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="memdiag-e2e-caps-")
        self.config = os.path.join(self.tmp, "memdiagd.yaml")
        with open(self.config, "w") as f:
            f.write(CONFIG)
        self.trace = os.path.join(self.tmp, "bpf.strace")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def bpf_calls(self):
        with open(self.trace) as f:
            return [l for l in f if "bpf(" in l]

    def follow(self, pid):
        """strace on every thread of `pid`, writing its bpf() calls to self.trace."""
        tracer = subprocess.Popen(["strace", "-f", "-qq", "-e", "trace=bpf", "-o", self.trace, "-p", str(pid)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=harness.die_with_parent)
        # strace says nothing once attached: wait until it shows as the daemon's tracer.
        attached = wait_for(lambda: tracer.poll() is None and self.traced_by(pid) == tracer.pid, timeout=10)
        if not attached:
            tracer.kill()
            raise AssertionError("strace did not attach: %s" % tracer.communicate()[1])
        return tracer

    @staticmethod
    def traced_by(pid):
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("TracerPid:"):
                    return int(line.split()[1])
        return 0

    def test_reason_once_no_retry_within_the_minute_others_up(self):
        with DroppedCapsDaemon(self.tmp, "--config", self.config) as d:
            d.wait_ready(timeout=30)

            def samples_total():
                return d.samples()[("memdiag_sampler_samples_total", "")]

            # The first sample tried the load and failed.
            self.assertTrue(wait_for(lambda: "source reclaim_stall" in d.logs()), d.logs())
            tracer = self.follow(d.proc.pid)
            try:
                start = samples_total()
                # 40 more samples (4 s): each probes the down source; none may try the load again.
                self.assertTrue(wait_for(lambda: samples_total() >= start + 40, timeout=60))
            finally:
                tracer.send_signal(signal.SIGINT)  # detaches from the daemon and exits
                tracer.communicate(timeout=10)
            self.assertEqual(self.bpf_calls(), [], "bpf() called again within the minute")

            s = d.samples()
            self.assertEqual(s[("memdiag_source_up", '{source="reclaim_stall"}')], 0)
            others = {k[1]: v for k, v in s.items() if k[0] == "memdiag_source_up" and "reclaim_stall" not in k[1]}
            self.assertEqual(sorted(others), sorted('{source="%s"}' % n for n in
                                                    ("meminfo", "vmstat", "pressure", "vm_sysctl", "cgroup", "canary")))
            self.assertEqual(set(others.values()), {1.0}, others)
            self.assertGreater(s[("memdiag_meminfo_mem_total_bytes", "")], 0)
            log = d.logs()
            said = [l for l in log.splitlines() if "reclaim_stall" in l]
            self.assertEqual(len(said), 1, log)
            # The loader's own status names what it lacks (capsh dropped both, and CAP_SYS_ADMIN).
            self.assertIn("permission denied loading BPF (needs CAP_BPF and CAP_PERFMON; the loader holds neither)",
                          said[0])
            self.assertEqual(d.stop(), 0)


if __name__ == "__main__":
    unittest.main()
