# SPDX-License-Identifier: Apache-2.0
"""The canary against the real kernel, through the real daemon's /metrics: the daemon's
own canary faults its working set in every cycle (page faults, not resident touches) and gives
it back; with node memory PSI at or above the configured threshold it skips its cycles, also
when the test makes real memory pressure, and resumes when it is gone; and a canary inside a
memory cgroup whose limit keeps reclaim going (a page-cache workload larger than the limit, made
by the test) reports slower page faults than one in an idle cgroup.

The daemon's own canary runs in a child process: memdiagd re-run as
`--canary-child`, in the daemon's memory cgroup, its working set in the child's memory and not
the daemon's (whose peak stays well below it); a child killed is started again within
`restart_after` and the counters carry on; a SIGHUP that leaves the canary's settings alone
keeps the very same child, and no child outlives the daemon.

Needs root and a v1 memory hierarchy for the cgroup part (this machine and CI); skipped, loudly,
elsewhere."""
import os
import shutil
import signal
import sys
import tempfile
import time
import unittest

from harness import (MEMDIAGD, V1_MEMORY, Daemon, V1Cgroup, start_dirty_writer, wait_for,
                     wait_for_calm_memory, write)
from test_cgroup_churn import built_with_asan

MIB = 1 << 20


def mean_fault_seconds(samples, cgroup):
    count = samples.get(("memdiag_canary_page_fault_seconds_count", '{cgroup="%s"}' % cgroup))
    total = samples.get(("memdiag_canary_page_fault_seconds_sum", '{cgroup="%s"}' % cgroup))
    return None if not count else total / count


def slow_fault_share(samples, cgroup, bound="6.5536e-05", since=None):
    """The share of the canary's page faults that took longer than `bound` seconds (since the
    samples `since`, if given)."""
    labels = '{cgroup="%s",le="%s"}' % (cgroup, bound)
    count = ("memdiag_canary_page_fault_seconds_count", '{cgroup="%s"}' % cgroup)
    bucket = ("memdiag_canary_page_fault_seconds_bucket", labels)
    total = samples[count] - (since[count] if since else 0)
    fast = samples[bucket] - (since[bucket] if since else 0)
    return 1 - fast / total


def node_psi_full_avg10():
    """Node memory PSI "full" avg10 in percent, or None without PSI."""
    try:
        with open("/proc/pressure/memory") as f:
            for line in f:
                if line.startswith("full "):
                    return float(line.split()[1].split("=")[1])
    except OSError:
        pass
    return None


def own_memory_cgroup(pid):
    with open("/proc/%d/cgroup" % pid) as f:
        for line in f:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            if "memory" in controllers.split(","):
                return path
    return ""


def status_bytes(pid, field):
    """A /proc/PID/status field ("VmHWM") in bytes."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no %s for %d" % (field, pid))


def canary_children(daemon_pid):
    """Pids of the live `--canary-child` processes a daemon started: their last argument is the
    pid of the daemon that started them, so this finds them also after it has gone."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % entry, "rb") as f:
                args = f.read().split(b"\0")[:-1]
        except OSError:
            continue
        if len(args) >= 2 and args[1] == b"--canary-child" and args[-1] == str(daemon_pid).encode():
            pids.append(int(entry))
    return pids


def start_seconds(pid):
    """When a process started, in seconds since boot (/proc/PID/stat field 22, clock ticks)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[19]) / os.sysconf("SC_CLK_TCK")


def child_pids(pid):
    """Every child of `pid`, zombies included (/proc/PID/task/*/children)."""
    pids = []
    for task in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/children" % (pid, task)) as f:
            pids += [int(p) for p in f.read().split()]
    return pids


class CanaryTest(unittest.TestCase):
    WINDOWS = 20  # of the reclaiming-cgroup comparison
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="memdiag-canary-", dir="/var/tmp")
        self.config = os.path.join(self.tmp, "memdiagd.yaml")
        self.cgroups = []
        self.workers = []

    def tearDown(self):
        for w in self.workers:
            if w.poll() is None:
                w.kill()
            w.wait()
        for c in self.cgroups:
            c.remove()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def wait_for_calm(self):
        """Waits (up to 120 s) until an earlier test's pressure has decayed from PSI avg10: node
        memory "some" below 2 %, so "full" (what the canary backs off on) is below it too."""
        wait_for_calm_memory(below=2.0, timeout=120)

    def start_dirty_writer(self, cgroup, file_bytes):
        """harness.start_dirty_writer with a file in this test's directory, killed in tearDown."""
        worker = start_dirty_writer(cgroup, os.path.join(self.tmp, "data-%d" % len(self.workers)), file_bytes)
        self.workers.append(worker)
        return worker

    def configure(self, canary):
        write(self.config, "sampler: {interval: 200ms}\n"
                           "sources:\n"
                           "  cgroup: {enabled: false}\n"
                           "  reclaim_stall: {enabled: false}\n"
                           "  processes: {enabled: false}\n"
                           "  canary: {%s}\n" % canary)

    def test_daemon_canary_faults_its_working_set_every_cycle_and_gives_it_back(self):
        self.wait_for_calm()  # the default threshold (10 %) must not be met by an earlier test's pressure
        self.configure("interval: 200ms, working_set_bytes: 4194304")
        with Daemon("--config", self.config) as d:
            d.wait_ready()
            cgroup = own_memory_cgroup(d.proc.pid)
            cycles = '{cgroup="%s"}' % cgroup
            self.assertTrue(wait_for(lambda: d.samples().get(("memdiag_canary_cycles_total", cycles), 0) >= 5),
                            d.scrape()[-3000:])
            s = d.samples()
            done = s[("memdiag_canary_cycles_total", cycles)]
            # Every cycle touches each of the working set's 1024 pages once (4 MiB, 4 KiB pages).
            faults = s[("memdiag_canary_page_fault_seconds_count", cycles)]
            self.assertGreaterEqual(faults, done * 1024)
            self.assertLessEqual(faults, (done + 1) * 1024)
            # Page faults, not touches of resident pages (~30 ns here): the memory really went back.
            self.assertGreater(mean_fault_seconds(s, cgroup), 300e-9)
            self.assertGreaterEqual(s[("memdiag_allocator_released_bytes_total", "")], done * 4194304)
            self.assertLessEqual(s[("memdiag_allocator_held_bytes", "")], 4194304)
            self.assertLessEqual(s[("memdiag_allocator_mappings", "")], 8)
            self.assertEqual(s[("memdiag_canary_failures_total", cycles)], 0)
            self.assertEqual(s[("memdiag_canary_backing_off", cycles)], 0)

    def test_backs_off_while_node_memory_pressure_is_at_the_threshold(self):
        """A threshold of 0 % makes any PSI reading "high": the canary must skip every cycle."""
        if not os.path.exists("/proc/pressure/memory"):
            self.skipTest("no PSI on this kernel")
        self.configure("interval: 200ms, working_set_bytes: 4194304, backoff_psi_full: 0")
        with Daemon("--config", self.config) as d:
            d.wait_ready()
            cycles = '{cgroup="%s"}' % own_memory_cgroup(d.proc.pid)
            self.assertTrue(wait_for(lambda: d.samples().get(("memdiag_canary_skipped_total", cycles), 0) >= 3))
            s = d.samples()
            self.assertEqual(s[("memdiag_canary_cycles_total", cycles)], 0)
            self.assertEqual(s[("memdiag_canary_page_fault_seconds_count", cycles)], 0)
            self.assertEqual(s[("memdiag_canary_backing_off", cycles)], 1)

    @unittest.skipUnless(os.geteuid() == 0 and os.path.isdir(V1_MEMORY) and node_psi_full_avg10() is not None,
                         "needs root, a v1 memory hierarchy and PSI")
    def test_backs_off_under_real_node_memory_pressure_and_resumes_when_it_is_gone(self):
        """Real pressure, not a threshold trick: a test-made dirty-page writer in a small cgroup
        drives node PSI full over the threshold; the canary must stop cycling, count the skipped
        cycles, and cycle again once PSI has decayed below the threshold."""
        self.wait_for_calm()
        # 2 %: one dirty writer on 2 CPUs drives PSI full to 2.4-5 % when other tests run beside
        # this one (a task of theirs on a CPU means not every task is stalled), more when alone;
        # 5 % failed on busy runs (fresh-ci saw 3.9 %). Backing off at 2 % is the same mechanism.
        threshold = 2
        self.configure("interval: 200ms, working_set_bytes: 4194304, backoff_psi_full: %d" % threshold)
        with Daemon("--config", self.config) as d:
            d.wait_ready()
            labels = '{cgroup="%s"}' % own_memory_cgroup(d.proc.pid)

            def value(s, name):
                return s.get((name, labels), 0)

            self.assertTrue(wait_for(lambda: value(d.samples(), "memdiag_canary_cycles_total") >= 3),
                            "the canary cycles while the node is calm (PSI full avg10 %s)" % node_psi_full_avg10())
            busy = V1Cgroup("memdiag-e2e-canary-pressure-%d" % os.getpid(), 64 << 20)
            self.cgroups.append(busy)
            writer = self.start_dirty_writer(busy, 128 << 20)

            def backing_off():
                s = d.samples()
                return s if value(s, "memdiag_canary_backing_off") == 1 and \
                    value(s, "memdiag_canary_skipped_total") >= 3 else None

            s = wait_for(backing_off, timeout=40)
            psi = node_psi_full_avg10()
            self.assertIsNotNone(s, "no backoff; node PSI full avg10 %s" % psi)
            self.assertGreaterEqual(psi, threshold * 0.5, "the pressure was real")
            cycles_under_pressure = value(s, "memdiag_canary_cycles_total")
            skipped = value(s, "memdiag_canary_skipped_total")
            writer.kill()
            writer.wait()

            def resumed():
                s = d.samples()
                return s if value(s, "memdiag_canary_backing_off") == 0 and \
                    value(s, "memdiag_canary_cycles_total") >= cycles_under_pressure + 3 else None

            s = wait_for(resumed, timeout=60)
            self.assertIsNotNone(s, "still backing off; node PSI full avg10 %s" % node_psi_full_avg10())
            self.assertLess(node_psi_full_avg10(), threshold * 2)
            self.assertGreaterEqual(value(s, "memdiag_canary_skipped_total"), skipped)
            self.assertEqual(value(s, "memdiag_canary_failures_total"), 0)

    @unittest.skipUnless(os.geteuid() == 0 and os.path.isdir(V1_MEMORY), "needs root and a v1 memory hierarchy")
    def test_canary_in_a_reclaiming_cgroup_sees_slower_page_faults_than_in_an_idle_one(self):
        idle = V1Cgroup("memdiag-e2e-canary-idle-%d" % os.getpid(), 1 << 30)
        busy = V1Cgroup("memdiag-e2e-canary-busy-%d" % os.getpid(), 96 << 20)
        self.cgroups += [idle, busy]
        self.start_dirty_writer(busy, 192 << 20)  # twice the limit
        # The writer drives node memory PSI up (on 2 CPUs one stalled task is a lot): this test
        # wants the canaries to measure, not to back off, so the threshold is out of reach.
        self.configure("interval: 300ms, working_set_bytes: 16777216, backoff_psi_full: 100, cgroups: [%s, %s]" %
                       (idle.path, busy.path))
        with Daemon("--config", self.config) as d:
            d.wait_ready()

            def cycles(s):
                return [s.get(("memdiag_canary_cycles_total", '{cgroup="%s"}' % c.path), 0) for c in (idle, busy)]

            s = wait_for(lambda: (lambda s: s if min(cycles(s)) >= 3 else None)(d.samples()), timeout=60)
            self.assertIsNotNone(s, [l for l in d.scrape().splitlines() if "canary" in l and "bucket" not in l])
            for c in (idle, busy):
                self.assertEqual(s[("memdiag_canary_running", '{cgroup="%s"}' % c.path)], 1)
            # Charging a page to a cgroup at its limit reclaims first; with dirty pages that waits
            # for writeback, which shows in the tail: the share of faults slower than 65.5 us.
            # Both canaries also lose faults to preemption on this 2-CPU machine, and how much
            # varies from run to run more than the effect itself (the tail is ~0.5-1 % idle,
            # ~1-1.8 % busy). So the two are compared window by window, each window taken at
            # the same time for both, and the busy canary must be slower in most windows: a
            # sign test, 14 of 20 windows or more (p = 0.058 if there were no difference; in 50
            # windows of 5 runs here the busy one was slower in 46). Stable: 20 runs of this
            # test in a row on 2026-12-01 (2 CPUs shared with other builds and tests, load
            # average up to ~12) all passed, each in 44-116 s.
            windows = []
            previous = s
            while len(windows) < self.WINDOWS:
                deadline = time.monotonic() + 30
                while True:
                    time.sleep(0.5)
                    now = d.samples()
                    if min(a - b for a, b in zip(cycles(now), cycles(previous))) >= 5:
                        break
                    self.assertLess(time.monotonic(), deadline, "the canaries stopped cycling")
                windows.append(tuple(slow_fault_share(now, c.path, since=previous) for c in (idle, busy)))
                previous = now
            for c in (idle, busy):
                self.assertEqual(now[("memdiag_canary_failures_total", '{cgroup="%s"}' % c.path)], 0)
            slower = sum(1 for idle_slow, busy_slow in windows if busy_slow > idle_slow)
            print("\ncanary: the busy cgroup's faults were slower in %d of %d windows" % (slower, len(windows)),
                  file=sys.stderr)
            self.assertGreaterEqual(slower, 14, "faults over 65.5 us per window (idle, busy): %s" %
                                    ", ".join("(%.2f%%, %.2f%%)" % (a * 100, b * 100) for a, b in windows))
            # The children really ran in those cgroups: their faults were charged there.
            with open(busy.v1 + "/memory.failcnt") as f:
                self.assertGreater(int(f.read()), 0)


class DaemonCanaryChildTest(unittest.TestCase):
    """The daemon's own canary in a child process."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="memdiag-canary-child-", dir="/var/tmp")
        self.config = os.path.join(self.tmp, "memdiagd.yaml")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def configure(self, canary, sampler="200ms"):
        # The eBPF sources off: each load's BTF parse would be the daemon's peak (test_peak_memory).
        write(self.config, "sampler: {interval: %s}\n"
                           "sources:\n"
                           "  reclaim_stall: {enabled: false}\n"
                           "  processes: {enabled: false}\n"
                           "  canary: {backoff_psi_full: 100, %s}\n" % (sampler, canary))

    def the_child(self, d):
        """The daemon's one canary child, once it has started."""
        children = wait_for(lambda: canary_children(d.proc.pid) or None, timeout=10)
        self.assertIsNotNone(children, "no --canary-child process of memdiagd: " + d.logs())
        self.assertEqual(len(children), 1, children)
        return children[0]

    def test_runs_in_a_child_in_the_daemons_cgroup_with_the_working_set_out_of_the_daemons_memory(self):
        """16 MiB every 200 ms: in the daemon, its peak would be >= 16 MiB; in the child it
        stays at what the daemon needs itself (~7 MiB with the canary off, docs/performance.md)."""
        working_set = 16 * MIB
        self.configure("interval: 200ms, working_set_bytes: %d" % working_set)
        with Daemon("--config", self.config) as d:
            d.wait_ready()
            cgroup = own_memory_cgroup(d.proc.pid)
            labels = '{cgroup="%s"}' % cgroup
            s = wait_for(lambda: (lambda s: s if s.get(("memdiag_canary_cycles_total", labels), 0) >= 5 else None)(
                d.samples()), timeout=30)
            self.assertIsNotNone(s, d.scrape()[-3000:])
            child = self.the_child(d)
            self.assertIn(child, child_pids(d.proc.pid), "the daemon's own child")
            with open("/proc/%d/cgroup" % child) as a, open("/proc/%d/cgroup" % d.proc.pid) as b:
                self.assertEqual(a.read(), b.read(), "the child stays in the daemon's cgroups")
            with open("/proc/%d/comm" % child) as f:
                self.assertEqual(f.read().strip(), "memdiag-canary")
            cycles = s[("memdiag_canary_cycles_total", labels)]
            # The series move as before: every cycle faults its 4096 pages in.
            self.assertGreaterEqual(s[("memdiag_canary_page_fault_seconds_count", labels)], cycles * 4096)
            self.assertGreater(mean_fault_seconds(s, cgroup), 300e-9)
            self.assertGreater(s[("memdiag_canary_cycle_seconds_count", labels)], 0)
            self.assertEqual(s[("memdiag_canary_running", labels)], 1)
            self.assertEqual(s[("memdiag_canary_failures_total", labels)], 0)
            self.assertEqual(s[("memdiag_source_up", '{source="canary"}')], 1)
            # The allocator's stats are the child's: every cycle released its working set.
            self.assertGreaterEqual(s[("memdiag_allocator_released_bytes_total", "")], cycles * working_set)
            self.assertGreater(s[("memdiag_allocator_reserved_bytes", "")], 0)
            # The working set was touched in the child (its peak; its RSS drops again after each
            # cycle gives the pages back), and not in the daemon.
            child_hwm, daemon_hwm = status_bytes(child, "VmHWM"), status_bytes(d.proc.pid, "VmHWM")
            print("\ncanary child VmHWM %.1f MiB, daemon VmHWM %.1f MiB" % (child_hwm / MIB, daemon_hwm / MIB),
                  file=sys.stderr)
            self.assertGreaterEqual(child_hwm, working_set)
            if built_with_asan(MEMDIAGD):
                return  # ASan's shadow memory and quarantine: the daemon's peak says nothing here
            self.assertLess(daemon_hwm, 12 * MIB)

    def test_a_killed_child_is_started_again_within_restart_after_and_the_counters_carry_on(self):
        """restart_after 5 s; the child is killed ~1 s after it started (3 cycles of 200 ms), so
        the daemon spends ~4 s without one: memdiag_canary_running and the log show it."""
        self.configure("interval: 200ms, working_set_bytes: 4194304, restart_after: 5s")
        with Daemon("--config", self.config) as d:
            d.wait_ready()
            labels = '{cgroup="%s"}' % own_memory_cgroup(d.proc.pid)
            counters = [("memdiag_canary_cycles_total", labels), ("memdiag_canary_page_fault_seconds_count", labels),
                        ("memdiag_canary_cycle_seconds_count", labels), ("memdiag_allocator_released_bytes_total", "")]
            self.assertTrue(wait_for(lambda: d.samples().get(counters[0], 0) >= 3, timeout=30))
            first = self.the_child(d)
            first_started = start_seconds(first)
            os.kill(first, signal.SIGKILL)
            killed_at = time.monotonic()
            seen = {c: 0 for c in counters}
            restarted_after = None
            down_seen = False
            deadline = killed_at + 30
            while time.monotonic() < deadline:
                s = d.samples()
                for c in counters:
                    self.assertGreaterEqual(s[c], seen[c], "%s went backwards" % (c,))
                    seen[c] = s[c]
                if s[("memdiag_canary_running", labels)] == 0:
                    down_seen = True
                    self.assertEqual(s[("memdiag_allocator_held_bytes", "")], 0)
                children = canary_children(d.proc.pid)
                if restarted_after is None and children and children != [first]:
                    restarted_after = time.monotonic() - killed_at
                    at_restart = dict(seen)
                if restarted_after is not None and seen[counters[0]] >= at_restart[counters[0]] + 3:
                    break
                time.sleep(0.1)
            self.assertTrue(down_seen, "memdiag_canary_running never showed the dead child")
            self.assertIsNotNone(restarted_after, "no new canary child within 30 s: " + d.logs())
            # Not before restart_after from the last start (no fork loop), and soon after it: one
            # sample (200 ms) to notice, the exec, the slack for a loaded machine.
            second = canary_children(d.proc.pid)[0]
            self.assertGreaterEqual(start_seconds(second) - first_started, 5 - 0.02)
            self.assertLess(restarted_after, 5 + 3)
            self.assertGreaterEqual(seen[counters[0]], at_restart[counters[0]] + 3,
                                    "the new child's cycles add to the old one's")
            self.assertEqual(d.samples()[("memdiag_canary_running", labels)], 1)
            # Said once, not per sample; and that it is over.
            logs = d.logs()
            self.assertEqual(logs.count("the daemon's canary: canary child killed by signal 9"), 1, logs)
            self.assertIn("source canary is complete again", logs)

    def test_a_reload_keeps_the_child_unless_the_canarys_settings_change(self):
        self.configure("interval: 200ms, working_set_bytes: 1048576", sampler="200ms")
        with Daemon("--config", self.config) as d:
            d.wait_ready()
            labels = '{cgroup="%s"}' % own_memory_cgroup(d.proc.pid)
            self.assertTrue(wait_for(lambda: d.samples().get(("memdiag_canary_cycles_total", labels), 0) >= 3))
            child = self.the_child(d)
            # Another source's settings and the sampler's interval change; the canary's do not.
            self.configure("interval: 200ms, working_set_bytes: 1048576", sampler="300ms")
            with open(self.config, "a") as f:
                f.write("  vm_sysctl: {refresh_interval: 5s}\n")
            d.signal(signal.SIGHUP)
            self.assertTrue(wait_for(lambda: "SIGHUP: reloaded" in d.logs()))
            cycles = d.samples()[("memdiag_canary_cycles_total", labels)]
            self.assertTrue(wait_for(lambda: d.samples()[("memdiag_canary_cycles_total", labels)] >= cycles + 3))
            self.assertEqual(canary_children(d.proc.pid), [child], "the same child serves on")
            # A changed canary setting: a new child, and the old one gone, reaped (not a zombie).
            self.configure("interval: 300ms, working_set_bytes: 1048576", sampler="300ms")
            d.signal(signal.SIGHUP)
            self.assertTrue(wait_for(lambda: (lambda c: c and c != [child])(canary_children(d.proc.pid))),
                            canary_children(d.proc.pid))
            self.assertTrue(wait_for(lambda: child not in child_pids(d.proc.pid), timeout=5),
                            "the old child still runs or is not reaped")
            self.assertEqual(len(canary_children(d.proc.pid)), 1)
            self.assertFalse(os.path.exists("/proc/%d" % child))
            self.assertEqual(d.stop(), 0)

    def test_no_child_outlives_a_stopped_daemon(self):
        """SIGTERM: the child is killed and reaped on the way out, not left to notice on its own
        (it checks its parent once per interval, 10 s here)."""
        self.configure("interval: 10s, working_set_bytes: 1048576")
        with Daemon("--config", self.config) as d:
            d.wait_ready()
            child = self.the_child(d)
            self.assertEqual(d.stop(), 0)
            self.assertEqual(canary_children(d.proc.pid), [])
            self.assertFalse(os.path.exists("/proc/%d" % child))

    def test_no_child_outlives_a_daemon_killed_outright(self):
        """SIGKILL: no destructor runs; the child's parent-death signal ends it."""
        self.configure("interval: 10s, working_set_bytes: 1048576")
        with Daemon("--config", self.config) as d:
            d.wait_ready()
            child = self.the_child(d)
            d.proc.kill()
            d.proc.wait()
            self.assertTrue(wait_for(lambda: not canary_children(d.proc.pid), timeout=2),
                            "canary child %d outlived its daemon" % child)


if __name__ == "__main__":
    unittest.main()
