# SPDX-License-Identifier: Apache-2.0
"""End to end: the real memdiagd on 127.0.0.1, scraped over HTTP, against the real /proc and
against fixture trees."""
import os
import re
import shutil
import signal
import socket
import tempfile
import time
import unittest

from harness import FIXTURES, Daemon, free_port, http_get, parse_exposition, promtool_check, run, wait_until


HAS_PSI = os.path.exists("/proc/pressure/memory")


def proc_meminfo_kb(field):
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


class RealNode(unittest.TestCase):
    def test_metrics_match_proc_and_counters_never_go_backwards(self):
        with Daemon("--config", os.path.join(os.path.dirname(__file__), "interval-200ms.yaml")) as d:
            d.wait_ready()
            first = d.samples()
            self.assertEqual(first[("memdiag_meminfo_mem_total_bytes", "")], proc_meminfo_kb("MemTotal") * 1024)
            for source in ("meminfo", "vmstat", "pressure", "vm_sysctl"):
                expected = 0 if source == "pressure" and not HAS_PSI else 1
                self.assertEqual(first[("memdiag_source_up", '{source="%s"}' % source)], expected, source)
            # every /proc/vmstat field is exported (none lost to a short read of the seq_file)
            with open("/proc/vmstat") as f:
                vmstat_fields = [line.split()[0] for line in f]
            exported = [k[0] for k in first if k[0].startswith("memdiag_vmstat_")]
            self.assertEqual(len(exported), len(vmstat_fields))
            self.assertTrue(wait_for(lambda: d.samples()[("memdiag_sampler_samples_total", "")] >=
                                     first[("memdiag_sampler_samples_total", "")] + 2))
            second = d.samples()
            self.assertGreater(second[("memdiag_sampler_samples_total", "")], first[("memdiag_sampler_samples_total", "")])
            counters = [k for k in first if k[0].startswith("memdiag_vmstat_") and k[0].endswith("_total")]
            self.assertGreater(len(counters), 50)
            for key in counters:
                self.assertGreaterEqual(second[key], first[key], key)
            # pgfault moves between two samples on any live machine
            self.assertGreater(second[("memdiag_vmstat_pgfault_total", "")], first[("memdiag_vmstat_pgfault_total", "")])
            with open("/proc/sys/vm/max_map_count") as f:
                self.assertEqual(second[("memdiag_vm_sysctl", '{name="max_map_count"}')], int(f.read()))
            self.assertEqual(d.stop(), 0)

    def test_process_self_metrics_describe_the_daemon(self):
        """process_*: the names every Prometheus client gives its own process, with this daemon's
        figures (its /proc/PID, its descriptors, its start)."""
        with Daemon() as d:
            d.wait_ready()
            started = time.time()
            samples = d.samples()
            with open("/proc/%d/status" % d.proc.pid) as f:
                rss_kib = int(re.search(r"^VmRSS:\s+(\d+) kB", f.read(), re.M).group(1))
            fds = len(os.listdir("/proc/%d/fd" % d.proc.pid))
            rss = samples[("process_resident_memory_bytes", "")]
            self.assertGreater(rss, 1 << 20)
            self.assertLess(abs(rss - rss_kib * 1024), 4 << 20, "RSS %d against VmRSS %d kB" % (rss, rss_kib))
            self.assertGreaterEqual(samples[("process_virtual_memory_bytes", "")], rss)
            self.assertLess(abs(samples[("process_open_fds", "")] - fds), 16)
            self.assertGreaterEqual(samples[("process_max_fds", "")], samples[("process_open_fds", "")])
            # Started within the last minute (this test started it), not at boot or in the future.
            self.assertLess(abs(samples[("process_start_time_seconds", "")] - started), 60)
            # CPU time counts in clock ticks (10 ms): a daemon this cheap shows 0 at first, and
            # more as it samples; it never goes back.
            first_cpu = samples[("process_cpu_seconds_total", "")]
            self.assertGreaterEqual(first_cpu, 0)
            wait_until(lambda: d.samples()[("process_cpu_seconds_total", "")] > first_cpu, 60,
                       "process_cpu_seconds_total to grow as the daemon samples")
            self.assertEqual(d.stop(), 0)

    def test_exposition_passes_promtool(self):
        with Daemon() as d:
            d.wait_ready()
            rc, out = promtool_check(d.scrape())
            self.assertEqual((rc, out), (0, ""))

    def test_once_prints_the_same_contract(self):
        p = run("--once")
        self.assertEqual(p.returncode, 0, p.stderr)
        samples = parse_exposition(p.stdout)
        self.assertEqual(samples[("memdiag_meminfo_mem_total_bytes", "")], proc_meminfo_kb("MemTotal") * 1024)
        self.assertEqual(promtool_check(p.stdout), (0, ""))

    def test_healthz_and_index(self):
        with Daemon() as d:
            d.wait_ready()
            self.assertEqual(http_get(d.port, "/healthz"), (200, "ok\n"))
            status, body = http_get(d.port, "/")
            self.assertEqual(status, 200)
            self.assertIn('href="/metrics"', body)
            self.assertEqual(http_get(d.port, "/no-such-page")[0], 404)

    def test_port_in_use_is_one_line_and_nonzero(self):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            s.listen()
            port = s.getsockname()[1]
            p = run("--web.listen-address", "127.0.0.1:%d" % port, timeout=15)
        self.assertEqual(p.returncode, 1)
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertIn("cannot listen on 127.0.0.1:%d" % port, lines[0])
        self.assertIn("in use", lines[0])
        self.assertNotIn("terminate", p.stderr)

    def test_sigint_stops_cleanly(self):
        with Daemon() as d:
            d.wait_ready()
            d.signal(signal.SIGINT)
            self.assertEqual(d.proc.wait(10), 0)
            self.assertIn("received SIGINT, stopping", d.logs())
            self.assertIn("stopped", d.logs())


class FixtureTrees(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="memdiag-e2e-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def copy_tree(self, name):
        dst = os.path.join(self.tmp, name)
        shutil.copytree(os.path.join(FIXTURES, name, "proc"), dst)
        return dst

    def test_broken_source_is_down_once_and_the_rest_serves(self):
        procfs = self.copy_tree("kernel-6.18")
        with open(os.path.join(procfs, "meminfo"), "w") as f:
            f.write("MemTotal:       8000000 kB\nMemFree:  garbage\n")
        with Daemon("--path.procfs", procfs, "--config", os.path.join(os.path.dirname(__file__), "interval-200ms.yaml")) as d:
            d.wait_ready()
            start = d.samples()[("memdiag_sampler_samples_total", "")]
            self.assertTrue(wait_for(lambda: d.samples()[("memdiag_sampler_samples_total", "")] >= start + 4))
            s = d.samples()
            self.assertEqual(s[("memdiag_source_up", '{source="meminfo"}')], 0)
            self.assertEqual(s[("memdiag_source_up", '{source="vmstat"}')], 1)
            self.assertNotIn(("memdiag_meminfo_mem_total_bytes", ""), s)
            self.assertIn(("memdiag_vmstat_pgscan_direct_total", ""), s)
            self.assertEqual(d.logs().count("source meminfo is down"), 1, d.logs())
            self.assertIn("line 2", d.logs())
            # repair the file in place: the source comes back without a restart, logged once
            with open(os.path.join(procfs, "meminfo"), "w") as f:
                f.write("MemTotal:       8000000 kB\nMemFree:  100 kB\n")
            self.assertTrue(wait_for(lambda: d.samples().get(("memdiag_source_up", '{source="meminfo"}')) == 1))
            s = d.samples()
            self.assertEqual(s[("memdiag_source_up", '{source="meminfo"}')], 1)
            self.assertEqual(s[("memdiag_meminfo_mem_total_bytes", "")], 8000000 * 1024)
            self.assertEqual(d.logs().count("source meminfo is back up"), 1)

    def test_kernel_without_psi(self):
        p = run("--once", "--path.procfs", os.path.join(FIXTURES, "kernel-3.10", "proc"))
        self.assertEqual(p.returncode, 0, p.stderr)
        s = parse_exposition(p.stdout)
        self.assertEqual(s[("memdiag_source_up", '{source="pressure"}')], 0)
        self.assertFalse(any(k[0].startswith("memdiag_pressure_") for k in s))
        self.assertEqual(s[("memdiag_vmstat_allocstall_total", "")], 90122)
        self.assertIn("PSI not available", p.stderr)
        self.assertEqual(promtool_check(p.stdout), (0, ""))

    def test_stuck_sampler_turns_healthz_503(self):
        procfs = self.copy_tree("kernel-6.18")
        os.unlink(os.path.join(procfs, "vmstat"))
        os.mkfifo(os.path.join(procfs, "vmstat"))  # opening a FIFO with no writer blocks forever
        with Daemon("--path.procfs", procfs, "--config", os.path.join(os.path.dirname(__file__), "interval-200ms.yaml")) as d:
            d.wait_ready(need_sample=False)
            deadline = time.monotonic() + 30
            status = None
            while time.monotonic() < deadline:
                status, body = http_get(d.port, "/healthz")
                if status == 503:
                    break
                time.sleep(0.2)
            self.assertEqual(status, 503)
            self.assertIn("stuck", body)
            self.assertEqual(http_get(d.port, "/metrics")[0], 200)  # still serving
            self.assertEqual(d.stop(timeout=15), 1)  # forced stop says so in the exit code
            self.assertIn("stuck in a read", d.logs())

    def test_a_blocked_process_scan_holds_up_no_other_source(self):
        """A maps file that cannot be read (a FIFO here; on a real node, a process whose
        mmap_lock a task stuck in reclaim holds) blocks the process scan, not the sampler: the
        other sources go on, the last complete scan is served with the age of the one in flight,
        and the blocked scan is collected once it can finish."""
        procfs = self.copy_tree("kernel-6.18")
        maps = os.path.join(procfs, "4242", "maps")
        with open(maps) as f:
            content = f.read()
        config = os.path.join(self.tmp, "memdiagd.yaml")
        with open(config, "w") as f:
            f.write("sampler: {interval: 200ms}\n"
                    "sources:\n"
                    "  reclaim_stall: {enabled: false}\n"
                    "  canary: {enabled: false}\n"
                    "  processes: {scanner: procfs}\n")
        with Daemon("--path.procfs", procfs, "--config", config) as d:
            d.wait_ready()
            self.assertTrue(wait_for(lambda: d.samples().get(("memdiag_processes", "")) == 2))
            os.unlink(maps)
            os.mkfifo(maps)
            s = None
            for _ in range(100):  # the next scan starts within 100 x its (sub-ms) duration
                s = d.samples()
                if s.get(("memdiag_process_scan_in_flight_seconds", ""), 0) >= 1:
                    break
                time.sleep(0.1)
            self.assertGreaterEqual(s[("memdiag_process_scan_in_flight_seconds", "")], 1, d.logs()[-2000:])
            self.assertEqual(s[("memdiag_source_up", '{source="processes"}')], 1, "the last scan is served")
            self.assertEqual(s[("memdiag_processes", "")], 2)
            # The sampler goes on: fresh samples, and /healthz says all is well.
            stamp = s[("memdiag_sampler_last_sample_timestamp_seconds", "")]
            self.assertTrue(wait_for(lambda: d.samples()[("memdiag_sampler_last_sample_timestamp_seconds", "")] > stamp + 0.5))
            self.assertEqual(http_get(d.port, "/healthz")[0], 200)
            self.assertNotIn("mmap_lock", d.logs(), "a slow scan is not a stuck one (yet)")
            # Stuck past 10 s, the source says so in the log, once.
            self.assertTrue(wait_for(lambda: "mmap_lock" in d.logs(), timeout=15))
            self.assertEqual(d.logs().count("mmap_lock"), 1, d.logs()[-2000:])
            # Unblocked, the scan finishes and is collected.
            fd = os.open(maps, os.O_WRONLY | os.O_NONBLOCK)
            os.write(fd, content.encode())
            os.close(fd)
            os.unlink(maps)
            with open(maps, "w") as f:
                f.write(content)
            self.assertTrue(wait_for(lambda: d.samples()[("memdiag_process_scan_in_flight_seconds", "")] == 0))
            self.assertEqual(d.stop(), 0)


def wait_for(predicate, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


class Reload(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="memdiag-e2e-")
        self.config = os.path.join(self.tmp, "memdiagd.yaml")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def write(self, text):
        with open(self.config, "w") as f:
            f.write(text)

    def test_sighup_applies_a_valid_config_and_keeps_the_old_one_otherwise(self):
        port = free_port()
        listen = "web: {listen_address: \"127.0.0.1:%d\"}\n" % port
        self.write(listen + "sampler: {interval: 200ms}\n")
        with Daemon("--config", self.config, port=port, listen_flag=False) as d:
            d.wait_ready()
            self.assertIn(("memdiag_vmstat_pgfault_total", ""), d.samples())
            self.write(listen + "sampler: {interval: 200ms}\nsources: {vmstat: {enabled: false}}\n")
            d.signal(signal.SIGHUP)
            self.assertTrue(wait_for(lambda: ("memdiag_vmstat_pgfault_total", "") not in d.samples()))
            self.assertIn("SIGHUP: reloaded", d.logs())
            # an invalid config is refused and the running one kept
            self.write(listen + "sampler: {interval: sometimes}\n")
            d.signal(signal.SIGHUP)
            self.assertTrue(wait_for(lambda: "keeping the running config" in d.logs()))
            self.assertIn("sampler.interval", d.logs())
            s = d.samples()
            self.assertNotIn(("memdiag_vmstat_pgfault_total", ""), s)
            self.assertIn(("memdiag_meminfo_mem_total_bytes", ""), s)
            # the listen address can move; the old one closes
            new_port = free_port()
            self.write("web: {listen_address: \"127.0.0.1:%d\"}\nsources: {vmstat: {enabled: false}}\n" % new_port)
            d.signal(signal.SIGHUP)
            self.assertTrue(wait_for(lambda: "now serving on http://127.0.0.1:%d" % new_port in d.logs()))
            self.assertEqual(http_get(new_port, "/healthz")[0], 200)
            with self.assertRaises(OSError):
                http_get(d.port, "/healthz", timeout=1)
            # same port, other host: released first, then bound again on the new host
            self.write("web: {listen_address: \"0.0.0.0:%d\"}\n" % new_port)
            d.signal(signal.SIGHUP)
            self.assertTrue(wait_for(lambda: "now serving on http://0.0.0.0:%d" % new_port in d.logs()))
            self.assertEqual(http_get(new_port, "/healthz")[0], 200)
            self.assertEqual(d.stop(), 0)

    def test_sighup_keeps_sources_whose_settings_did_not_change(self):
        """Their state carries on: the canary's counters keep counting from where they were
        (a new instance would start from 0), while a source whose settings changed starts anew."""
        port = free_port()
        base = ("web: {listen_address: \"127.0.0.1:%d\"}\n"
                "sources:\n"
                "  reclaim_stall: {enabled: false}\n"
                "  canary: {interval: 100ms, working_set_bytes: 1048576}\n" % port)
        self.write(base + "  vm_sysctl: {refresh_interval: 0s}\nsampler: {interval: 100ms}\n")
        with Daemon("--config", self.config, port=port, listen_flag=False) as d:
            d.wait_ready()

            def canary_cycles():
                s = d.samples()
                return sum(v for (name, _), v in s.items() if name == "memdiag_canary_cycles_total")

            self.assertTrue(wait_for(lambda: canary_cycles() >= 20, timeout=20))
            before = canary_cycles()
            # Only the sampler interval and another source's settings change.
            self.write(base + "  vm_sysctl: {refresh_interval: 5s}\nsampler: {interval: 150ms}\n")
            d.signal(signal.SIGHUP)
            self.assertTrue(wait_for(lambda: "SIGHUP: reloaded" in d.logs()))
            taken = d.samples()[("memdiag_sampler_samples_total", "")]  # a rebuilt canary would be at ~3 cycles
            self.assertTrue(wait_for(lambda: d.samples()[("memdiag_sampler_samples_total", "")] >= taken + 3))
            self.assertGreaterEqual(canary_cycles(), before, "the canary source was rebuilt: its counters restarted")
            # A changed canary setting does rebuild it: its counters start again.
            self.write(base.replace("interval: 100ms", "interval: 5s") +
                       "  vm_sysctl: {refresh_interval: 5s}\nsampler: {interval: 150ms}\n")
            d.signal(signal.SIGHUP)
            self.assertTrue(wait_for(lambda: canary_cycles() < before, timeout=10))
            self.assertEqual(d.stop(), 0)


if __name__ == "__main__":
    unittest.main()
