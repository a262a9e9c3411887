#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""memdiagd.exe under wine: in the foreground with --console, and as a Windows service
that wine's service manager creates, starts, reloads, stops and deletes, scraped over HTTP from
Linux each time. Only values wine really provides are asserted (as measured under wine 8:
commit charge and limit, physical memory, working sets; never commit peak, system cache,
private bytes or page faults, which wine leaves at 0, nor PDH's paging counters, which it lacks).

    test_windows_daemon.py MEMDIAGD_EXE SERVICE_CONTROL_EXE   (ctest: windows_daemon)
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
from harness import REPO, die_with_parent, free_port, http_get, parse_exposition, wait_for  # noqa: E402

WINE_RUN = os.path.join(REPO, "windows", "cross", "wine-run.sh")
WINE = "/usr/lib/wine/wine64"
ENV = dict(os.environ,
           WINEPREFIX=os.environ.get("MEMDIAG_WINEPREFIX", "/var/cache/memdiag/wine-prefix"),
           WINEDEBUG="-all", WINEDLLOVERRIDES="mscoree,mshtml=")
# The Windows catalog (windows/windows_catalog.cpp): each must say whether it is up.
WINDOWS_SOURCES = ("windows_memory", "windows_paging", "windows_processes", "canary")
MEMDIAGD_EXE = SERVICE_CONTROL_EXE = None


def windows_path(path):
    """The path wine's Z: drive gives a Linux file."""
    return "Z:" + os.path.abspath(path).replace("/", "\\")


def wine(*args, timeout=120):
    """A Windows program run to completion (wine-run.sh makes the prefix and keeps a wineserver)."""
    return subprocess.run([WINE_RUN, *args], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=timeout, env=ENV)


def scrape(port):
    status, body = http_get(port, "/metrics", timeout=5)
    if status != 200:
        raise AssertionError("/metrics answered %d" % status)
    return parse_exposition(body)


def scrape_when_sampled(port, timeout=60):
    """The first exposition that has every Windows source's memdiag_source_up (None if none came)."""
    def ready():
        try:
            samples = scrape(port)
        except (OSError, AssertionError):
            return None
        have = {labels for (name, labels) in samples if name == "memdiag_source_up"}
        return samples if all('{source="%s"}' % s in have for s in WINDOWS_SOURCES) else None
    return wait_for(ready, timeout=timeout)


def port_closed(port):
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) != 0


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return ""


class ServesTheContract:
    """What every memdiagd.exe, console or service, must serve once it has sampled."""

    def check_metrics(self, samples, port):
        # As a person would check it from the Linux side: curl.
        curled = subprocess.run(["curl", "-sf", "--max-time", "10", "http://127.0.0.1:%d/metrics" % port],
                                capture_output=True, text=True, timeout=20)
        self.assertEqual(curled.returncode, 0, curled.stderr)
        self.assertGreater(parse_exposition(curled.stdout)[("memdiag_commit_limit_bytes", "")], 0)
        limit = samples.get(("memdiag_commit_limit_bytes", ""), 0)
        charge = samples.get(("memdiag_commit_charge_bytes", ""), 0)
        total = samples.get(("memdiag_memory_total_bytes", ""), 0)
        self.assertGreater(limit, 0)
        self.assertGreater(charge, 0)
        self.assertLess(charge, limit)
        # Page files count as swap: the commit limit is RAM plus them (windows/figures).
        self.assertGreater(total, 0)
        self.assertLessEqual(total, limit)
        for source in ("windows_memory", "windows_processes", "canary"):
            self.assertEqual(samples[("memdiag_source_up", '{source="%s"}' % source)], 1, source)
        # PDH has no \Memory counters under wine: the source says so and stays down, cleanly.
        self.assertIn(("memdiag_source_up", '{source="windows_paging"}'), samples)
        working_sets = [v for (name, _), v in samples.items() if name == "memdiag_process_working_set_bytes"]
        self.assertTrue(working_sets, "no process working sets")
        self.assertGreater(max(working_sets), 0)
        daemon_rows = [labels for (name, labels) in samples
                       if name == "memdiag_process_working_set_bytes" and 'comm="memdiagd.exe"' in labels]
        self.assertTrue(daemon_rows, "the daemon's own process is not among the selected")

    def check_canary(self, port):
        """The canary's first cycle runs at start: real page faults timed under wine."""
        def cycled():
            samples = scrape(port)
            cycles = [v for (name, _), v in samples.items() if name == "memdiag_canary_cycles_total"]
            return samples if cycles and cycles[0] >= 1 else None
        samples = wait_for(cycled, timeout=30)
        self.assertIsNotNone(samples, "no canary cycle in 30 s")
        faults = [v for (name, _), v in samples.items() if name == "memdiag_canary_page_fault_seconds_count"]
        self.assertTrue(faults and faults[0] >= 4096, faults)  # 16 MiB of 4 KiB pages a cycle
        released = [v for (name, _), v in samples.items() if name == "memdiag_allocator_released_bytes_total"]
        self.assertTrue(released and released[0] >= 16 << 20, released)

    def check_diagnosis(self, port):
        status, body = http_get(port, "/api/v1/diagnosis")
        self.assertEqual(status, 200, body[:300])
        report = json.loads(body)
        self.assertEqual(report["schema"], "memdiag.diagnosis/v1")
        self.assertEqual(report["origin"], "daemon")
        self.assertIn(report["stall"]["level"]["name"], ("none", "some", "stalling", "severe", "critical"))
        # Windows enforces commit: its policy is "never overcommit".
        self.assertEqual(report["overcommit"]["mode"], "never")
        status, text = http_get(port, "/api/v1/diagnosis?format=text")
        self.assertEqual(status, 200)
        self.assertIn("stall", text.lower())
        self.assertEqual(http_get(port, "/healthz")[0], 200)
        self.assertEqual(http_get(port, "/no-such-page")[0], 404)


class ConsoleMode(unittest.TestCase, ServesTheContract):
    def start(self, *args):
        self.log = tempfile.NamedTemporaryFile(prefix="memdiagd-exe-", suffix=".log", delete=False)
        self.addCleanup(os.unlink, self.log.name)
        proc = subprocess.Popen([WINE, MEMDIAGD_EXE, "--console", *args], stdin=subprocess.DEVNULL,
                                stdout=self.log, stderr=subprocess.STDOUT, env=ENV, preexec_fn=die_with_parent)
        self.addCleanup(lambda: proc.poll() is None and (proc.kill(), proc.wait()))
        return proc

    def test_serves_metrics_and_diagnosis_and_stops_on_ctrl_c(self):
        port = free_port()
        log_file = tempfile.NamedTemporaryFile(prefix="memdiagd-exe-file-", suffix=".log", delete=False).name
        self.addCleanup(os.unlink, log_file)
        proc = self.start("--web.listen-address", "127.0.0.1:%d" % port, "--log.file", windows_path(log_file))
        samples = scrape_when_sampled(port)
        self.assertIsNotNone(samples, read(self.log.name))
        self.check_metrics(samples, port)
        self.check_diagnosis(port)
        self.check_canary(port)
        # wine turns SIGINT into the console's Ctrl+C event.
        proc.send_signal(2)
        self.assertEqual(proc.wait(timeout=30), 0, read(self.log.name))
        logged = read(log_file)
        self.assertIn("serving on http://127.0.0.1:%d/metrics" % port, logged)
        self.assertIn("received Ctrl+C, stopping", logged)
        self.assertIn(" info stopped", logged)
        self.assertTrue(port_closed(port))

    def test_a_taken_port_exits_1_naming_it(self):
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            proc = self.start("--web.listen-address", "127.0.0.1:%d" % port)
            self.assertEqual(proc.wait(timeout=60), 1, read(self.log.name))
        self.assertIn("cannot listen on 127.0.0.1:%d" % port, read(self.log.name))

    def test_a_bad_config_exits_2_with_file_line_and_key(self):
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as config:
            config.write("log:\n  level: info\nsampler:\n  interval: soon\n")
        self.addCleanup(os.unlink, config.name)
        proc = self.start("--config", windows_path(config.name))
        self.assertEqual(proc.wait(timeout=60), 2, read(self.log.name))
        self.assertIn("%s:4: sampler.interval:" % windows_path(config.name), read(self.log.name))

    def test_a_web_config_is_refused_with_exit_2(self):
        """No OpenSSL in the Windows build: --web.config.file (TLS, basic auth) is refused before
        anything listens, saying so."""
        with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as web:
            web.write("basic_auth_users: {}\n")
        self.addCleanup(os.unlink, web.name)
        proc = self.start("--web.config.file", windows_path(web.name))
        self.assertEqual(proc.wait(timeout=60), 2, read(self.log.name))
        self.assertIn("not supported by this build of memdiagd", read(self.log.name))


    def test_the_windows_example_config_checks_out_and_linuxs_is_refused(self):
        example = windows_path(os.path.join(REPO, "deploy", "windows", "memdiagd.yaml"))
        checked = wine(MEMDIAGD_EXE, "--check-config", "--config", example)
        self.assertEqual(checked.returncode, 0, checked.stdout + checked.stderr)
        self.assertIn(example + ": ok", checked.stdout)
        # Linux's sources are not Windows's: named, with the line, and exit 2.
        linux = windows_path(os.path.join(REPO, "deploy", "memdiagd.yaml"))
        refused = wine(MEMDIAGD_EXE, "--check-config", "--config", linux)
        self.assertEqual(refused.returncode, 2, refused.stdout + refused.stderr)
        self.assertIn("sources.meminfo", refused.stdout + refused.stderr)


class ServiceMode(unittest.TestCase, ServesTheContract):
    """sc create, start, query, (paramchange), stop, query, delete, as an administrator would."""

    def sc(self, *args):
        result = wine("sc", *args)
        return result.returncode, result.stdout + result.stderr

    def state(self):
        """The service's state as sc query names it (RUNNING, STOPPED, ...)."""
        _, out = self.sc("query", self.name)
        for line in out.splitlines():
            if "STATE" in line:
                return line.split()[-1]
        return out.strip()

    def test_created_started_scraped_reloaded_stopped_deleted(self):
        self.name = "memdiagd-test-%d" % os.getpid()
        port = free_port()
        work = tempfile.mkdtemp(prefix="memdiagd-service-")
        log_file = os.path.join(work, "memdiagd.log")
        config = os.path.join(work, "memdiagd.yaml")
        with open(config, "w") as f:
            f.write("sampler:\n  interval: 1s\n")
        self.addCleanup(subprocess.run, ["rm", "-rf", work])
        command = "%s --config %s --web.listen-address 127.0.0.1:%d --log.file %s" % (
            windows_path(MEMDIAGD_EXE), windows_path(config), port, windows_path(log_file))
        rc, out = self.sc("create", self.name, "binpath=", command)
        self.assertEqual(rc, 0, out)
        self.addCleanup(lambda: (self.sc("stop", self.name), self.sc("delete", self.name)))

        rc, out = self.sc("start", self.name)
        self.assertEqual(rc, 0, out)
        samples = scrape_when_sampled(port)
        self.assertIsNotNone(samples, read(log_file))
        self.assertEqual(wait_for(lambda: self.state() == "RUNNING", timeout=30) and self.state(), "RUNNING")
        self.check_metrics(samples, port)
        self.check_diagnosis(port)

        # paramchange reloads --config, as SIGHUP does on Linux.
        with open(config, "w") as f:
            f.write("sampler:\n  interval: 500ms\nlog:\n  level: debug\n")
        control = wine(SERVICE_CONTROL_EXE, self.name, "paramchange")
        self.assertEqual(control.returncode, 0, control.stdout + control.stderr)
        self.assertTrue(wait_for(lambda: "service paramchange: reloaded" in read(log_file), timeout=30),
                        read(log_file))
        # The new config took effect: its debug level shows the sampler keeping every source.
        kept = "sources reconfigured: %d kept running, 0 new" % len(WINDOWS_SOURCES)
        self.assertTrue(wait_for(lambda: kept in read(log_file), timeout=30), read(log_file))

        rc, out = self.sc("stop", self.name)
        self.assertEqual(rc, 0, out)
        self.assertTrue(wait_for(lambda: self.state() == "STOPPED", timeout=60), self.state())
        self.assertTrue(wait_for(lambda: port_closed(port), timeout=10))
        logged = read(log_file)
        self.assertIn("received service stop, stopping", logged)
        self.assertIn(" info stopped", logged)
        _, out = self.sc("query", self.name)
        self.assertRegex(out, r"WIN32_EXIT_CODE\s*:\s*0\b")

        rc, out = self.sc("delete", self.name)
        self.assertEqual(rc, 0, out)
        self.assertNotEqual(self.sc("query", self.name)[0], 0, "the service is still there after delete")

    def test_a_service_that_cannot_start_says_why_in_its_default_log(self):
        """No console to print to: the refused config goes to %ProgramData%\\memdiag\\memdiagd.log
        and the service manager gets the exit code (2) as a service-specific error."""
        self.name = "memdiagd-bad-%d" % os.getpid()
        work = tempfile.mkdtemp(prefix="memdiagd-service-")
        self.addCleanup(subprocess.run, ["rm", "-rf", work])
        config = os.path.join(work, "bad.yaml")
        with open(config, "w") as f:
            f.write("sampler:\n  interval: never\n")
        default_log = os.path.join(ENV["WINEPREFIX"], "drive_c", "ProgramData", "memdiag", "memdiagd.log")
        command = "%s --config %s --web.listen-address 127.0.0.1:%d" % (
            windows_path(MEMDIAGD_EXE), windows_path(config), free_port())
        rc, out = self.sc("create", self.name, "binpath=", command)
        self.assertEqual(rc, 0, out)
        self.addCleanup(lambda: (self.sc("stop", self.name), self.sc("delete", self.name)))
        self.sc("start", self.name)
        self.assertTrue(wait_for(lambda: self.state() == "STOPPED", timeout=60), self.state())
        expected = "invalid config: %s:2: sampler.interval:" % windows_path(config)
        self.assertTrue(wait_for(lambda: expected in read(default_log), timeout=10), read(default_log)[-2000:])
        _, out = self.sc("query", self.name)
        self.assertRegex(out, r"WIN32_EXIT_CODE\s*:\s*1066\b")  # ERROR_SERVICE_SPECIFIC_ERROR
        self.assertRegex(out, r"SERVICE_EXIT_CODE\s*:\s*2\b")


if __name__ == "__main__":
    MEMDIAGD_EXE, SERVICE_CONTROL_EXE = sys.argv[1], sys.argv[2]
    # The prefix and a persistent wineserver, made once before any test times itself.
    prepared = wine("cmd", "/c", "exit", "0", timeout=300)
    if prepared.returncode != 0:
        sys.exit("cannot run wine: %s" % (prepared.stdout + prepared.stderr))
    unittest.main(argv=sys.argv[:1], verbosity=2)
