# SPDX-License-Identifier: Apache-2.0
"""Scrapes answer while the daemon's own memory cgroup reclaims (docs/operations.md "Hardening").

Two real daemons share one v1 memory cgroup with a limit: one with its memory locked
(daemon.lock_memory: true, the default), one without (false). Beside them in that cgroup a
workload holds all but 32 MiB of the limit in anonymous memory and reads a 64 MiB file in a loop,
so the cgroup thrashes without pause. A swap file is on for the test (this machine has none), so
reclaim can take anonymous pages too, the daemons' heaps and stacks among them, as on a node with
swap or zram; without swap the kernel keeps executable file pages active and the daemons lose
nothing worth measuring. Then 200 rounds, 0.1 s apart (reclaim takes what a daemon leaves idle
between scrapes), scrape /metrics of each daemon, in alternating order. The locked one must
answer every scrape with a p99 under 50 ms and take no major fault; the unlocked one's figures
are printed beside it (the benefit, measured), with the major faults each daemon took."""
import http.client
import os
import shutil
import statistics
import subprocess
import tempfile
import time
import unittest

import harness
from harness import V1_MEMORY, Daemon, V1Cgroup, die_with_parent, wait_for_samples, wait_until, write

LIMIT = 160 << 20
HELD_ANON = LIMIT - (32 << 20)
STREAMED_FILE = 64 << 20  # twice the room left: read in a loop, it thrashes
SCRAPES = 200

CONFIG = """sampler: {interval: 500ms}
daemon: {lock_memory: %s}
sources:
  canary: {enabled: false}   # its child would share the cgroup: only the daemons and the workload
"""


def major_faults(pid):
    with open("/proc/%d/stat" % pid) as f:
        return int(f.read().rsplit(")", 1)[1].split()[9])


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100.0 * (len(ordered) - 1))))]


def scrape_seconds(port):
    """Seconds from connect to the last byte of /metrics; None when it failed."""
    start = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", "/metrics")
        response = conn.getresponse()
        body = response.read()
        if response.status != 200 or b"memdiag_source_up" not in body:
            return None
    except OSError:
        return None
    finally:
        conn.close()
    return time.monotonic() - start


@unittest.skipUnless(os.geteuid() == 0 and os.path.exists(V1_MEMORY + "/memory.limit_in_bytes"),
                     "needs root and the v1 memory hierarchy")
class ScrapesUnderReclaim(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="memdiag-e2e-reclaim-", dir="/var/tmp")
        self.cgroup = V1Cgroup("memdiag-e2e-scrape-reclaim-%d" % os.getpid(), LIMIT)
        self.workload = []
        self.swap = None
        self.swap_on()

    def swap_on(self):
        """A swap file for the test's duration (this machine has none): with it, reclaim in the
        cgroup can take the daemons' anonymous memory (heap, stacks) too, as on a node with swap
        or zram; without it only file pages can go, and the kernel keeps executable ones."""
        swap = os.path.join(self.tmp, "swap")
        subprocess.run(["fallocate", "-l", "256M", swap], check=True)
        os.chmod(swap, 0o600)
        subprocess.run(["mkswap", swap], check=True, capture_output=True)
        p = subprocess.run(["swapon", swap], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, "swapon: " + p.stderr)
        self.swap = swap
        write(self.cgroup.v1 + "/memory.swappiness", "100")

    def tearDown(self):
        for p in self.workload:
            p.kill()
            p.wait()
        self.cgroup.remove()
        if self.swap:
            subprocess.run(["swapoff", self.swap], capture_output=True)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def daemon(self, lock):
        """A daemon started inside the cgroup, from a private copy of the binary: its code is then
        charged to the cgroup as it faults in (a page cache page is charged to whoever reads it
        first, and another test's daemon may hold the build's binary), so reclaim there can take
        it. A wrapper enters the cgroup and execs the copy: the process the harness started is
        the daemon itself."""
        binary = os.path.join(self.tmp, "memdiagd-%s" % ("locked" if lock else "unlocked"))
        shutil.copyfile(harness.MEMDIAGD, binary)
        os.chmod(binary, 0o755)
        wrapper = binary + ".sh"
        write(wrapper, "#!/bin/sh\n%s\nexec %s \"$@\"\n" % (self.cgroup.shell(":"), binary))
        os.chmod(wrapper, 0o755)
        config = os.path.join(self.tmp, "lock-%s.yaml" % lock)
        write(config, CONFIG % ("true" if lock else "false"))
        real = harness.MEMDIAGD
        harness.MEMDIAGD = wrapper
        try:
            d = Daemon("--config", config)
        finally:
            harness.MEMDIAGD = real
        d.wait_ready(timeout=30)
        return d

    def start_workload(self):
        data = os.path.join(self.tmp, "streamed")
        with open(data, "wb") as f:
            f.truncate(STREAMED_FILE)  # sparse: read, it fills the page cache with zero pages
        hold = ("import sys, time\n"
                "b = bytearray(int(sys.argv[1]))\n"
                "for i in range(0, len(b), 4096): b[i] = 1\n"
                "print('held', flush=True)\n"
                "time.sleep(3600)\n")
        holder = subprocess.Popen(["sh", "-c", self.cgroup.shell('exec python3 -c "$0" "$1"'), hold, str(HELD_ANON)],
                                  stdout=subprocess.PIPE, text=True, preexec_fn=die_with_parent)
        self.workload.append(holder)
        self.assertEqual(holder.stdout.readline().strip(), "held")
        stream = "while :; do dd if=%s of=/dev/null bs=1M status=none; done" % data
        self.workload.append(subprocess.Popen(["sh", "-c", self.cgroup.shell(stream)], preexec_fn=die_with_parent))

    def cgroup_counter(self, name):
        with open(self.cgroup.v1 + "/memory.stat") as f:
            for line in f:
                key, value = line.split()
                if key == name:
                    return int(value)
        raise AssertionError("no %s in memory.stat" % name)

    def test_locked_daemon_answers_every_scrape_quickly_while_its_cgroup_reclaims(self):
        with self.daemon(lock=True) as locked, self.daemon(lock=False) as unlocked:
            self.assertEqual(wait_for_samples(locked)[("memdiag_daemon_memory_locked", "")], 1)
            self.assertEqual(wait_for_samples(unlocked)[("memdiag_daemon_memory_locked", "")], 0)
            self.start_workload()
            # Reclaim under way: the cgroup is at its limit and pages go out.
            wait_until(lambda: self.cgroup_counter("total_pgpgout") > 50000, 60, "the cgroup to reclaim")
            pgpgout = self.cgroup_counter("total_pgpgout")
            faults = {d: major_faults(d.proc.pid) for d in (locked, unlocked)}
            times = {locked: [], unlocked: []}
            failures = {locked: 0, unlocked: 0}
            for round_number in range(SCRAPES):
                # Prometheus scrapes every few seconds; in between, reclaim takes what the
                # HTTP path does not touch. A pause lets it (shortened, to bound the test).
                time.sleep(0.1)
                # Alternate who goes first after the pause, so neither always meets a cold cache.
                for d in ((locked, unlocked) if round_number % 2 == 0 else (unlocked, locked)):
                    seconds = scrape_seconds(d.port)
                    if seconds is None:
                        failures[d] += 1
                    else:
                        times[d].append(seconds)
            reclaimed = self.cgroup_counter("total_pgpgout") - pgpgout
            faults = {d: major_faults(d.proc.pid) - faults[d] for d in (locked, unlocked)}
            # Both still sampling: the unlocked one slowed, it did not stop.
            wait_for_samples(locked)
            wait_for_samples(unlocked)

        def line(name, d):
            t = times[d]
            return ("%-9s scrapes %d ok, %d failed; p50 %.2f ms, p99 %.2f ms, max %.2f ms; %d major faults"
                    % (name, len(t), failures[d], 1000 * statistics.median(t), 1000 * percentile(t, 99),
                       1000 * max(t), faults[d]))
        report = "\n".join([
            "scrapes under reclaim: %d scrapes each, alternating, %d pages reclaimed meanwhile "
            "(cgroup limit %d MiB, %d MiB anon held, a %d MiB file streamed)"
            % (SCRAPES, reclaimed, LIMIT >> 20, HELD_ANON >> 20, STREAMED_FILE >> 20),
            line("locked", locked), line("unlocked", unlocked)])
        print("\n" + report)
        self.assertGreater(reclaimed, 10000, "the cgroup did not reclaim during the scrapes:\n" + report)
        self.assertEqual(failures[locked], 0, report)
        self.assertEqual(len(times[locked]), SCRAPES)
        self.assertLess(percentile(times[locked], 99), 0.050, report)
        # What the lock is for: nothing of the locked daemon had to be read back in.
        self.assertLessEqual(faults[locked], 1, report)
        self.assertGreater(faults[unlocked], faults[locked], "the reclaim never reached the daemons:\n" + report)


if __name__ == "__main__":
    unittest.main()
