# SPDX-License-Identifier: Apache-2.0
"""memdiagd as systemd's Type=notify service sees it: the real daemon with
NOTIFY_SOCKET pointing at a datagram socket this test reads, as systemd's would. READY=1 comes
after the first sample (so /metrics already answers with one), STATUS= says the verdicts,
WATCHDOG=1 follows every sample while WATCHDOG_USEC is set, SIGHUP is RELOADING=1 (with
MONOTONIC_USEC) then READY=1, SIGTERM is STOPPING=1; a sampler stuck from the first sample sends
neither READY=1 nor a single WATCHDOG=1, which is what gets it restarted."""
import os
import shutil
import signal
import socket
import tempfile
import time
import unittest

from harness import FIXTURES, Daemon, http_get, parse_exposition


class NotifySocket:
    """A datagram socket where sd_notify's messages arrive, each split into its KEY=VALUE lines."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="memdiag-notify-")
        self.path = os.path.join(self.dir, "notify")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.messages = []
        self.cursor = 0  # messages before it were looked at by wait_for

    def receive(self, timeout):
        """The messages that arrive within `timeout` seconds (each a dict), added to self.messages."""
        got = []
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return got
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(4096).decode()
            except socket.timeout:
                return got
            fields = dict(line.split("=", 1) for line in data.splitlines() if "=" in line)
            got.append(fields)
            self.messages.append(fields)

    def wait_for(self, key, timeout=20):
        """The next message with `key` (after the last one returned) within `timeout`, or None;
        messages that arrived together are all looked at, in order."""
        deadline = time.monotonic() + timeout
        while True:
            while self.cursor < len(self.messages):
                m = self.messages[self.cursor]
                self.cursor += 1
                if key in m:
                    return m
            if time.monotonic() >= deadline:
                return None
            self.receive(min(0.5, deadline - time.monotonic()))

    def close(self):
        self.sock.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class SystemdNotify(unittest.TestCase):
    def setUp(self):
        self.notify = NotifySocket()
        self.addCleanup(self.notify.close)
        self.env = dict(os.environ, NOTIFY_SOCKET=self.notify.path, WATCHDOG_USEC="2000000")

    def start(self, *args):
        saved = dict(os.environ)
        os.environ.update(self.env)  # Daemon starts memdiagd with this process's environment
        try:
            daemon = Daemon(*args)
        finally:
            os.environ.clear()
            os.environ.update(saved)
        self.addCleanup(daemon.__exit__, None, None, None)
        return daemon

    def test_ready_after_the_first_sample_then_a_watchdog_ping_every_sample(self):
        config = os.path.join(tempfile.mkdtemp(prefix="memdiag-notify-cfg-"), "memdiagd.yaml")
        with open(config, "w") as f:
            f.write("sampler:\n  interval: 200ms\nsources:\n  canary:\n    enabled: false\n")
        d = self.start("--config", config)
        ready = self.notify.wait_for("READY")
        self.assertIsNotNone(ready, d.logs())
        self.assertEqual(ready["READY"], "1")
        # Ready means a sample is in: /metrics answers with it at once.
        status, body = http_get(d.port, "/metrics")
        self.assertEqual(status, 200)
        self.assertIn(("memdiag_source_up", '{source="meminfo"}'), parse_exposition(body))
        # The first message carries the status line with the verdicts and the sources.
        self.assertIn("STATUS", ready)
        self.assertRegex(ready["STATUS"], r"^stall (none|low|medium|high|critical).*; \d+/\d+ sources up")
        self.assertIn("WATCHDOG", ready)
        # 200 ms samples for 2 s: about ten pings, none with READY again.
        self.notify.cursor = len(self.notify.messages)
        later = self.notify.receive(2.0)
        pings = [m for m in later if m.get("WATCHDOG") == "1"]
        self.assertGreaterEqual(len(pings), 5, later)
        self.assertFalse(any("READY" in m for m in later), later)

        # SIGHUP: RELOADING=1 with the monotonic time, then READY=1 once it is done.
        self.notify.cursor = len(self.notify.messages)
        d.proc.send_signal(signal.SIGHUP)
        reloading = self.notify.wait_for("RELOADING")
        self.assertIsNotNone(reloading)
        self.assertEqual(reloading["RELOADING"], "1")
        self.assertGreater(int(reloading["MONOTONIC_USEC"]), 0)
        self.assertLessEqual(int(reloading["MONOTONIC_USEC"]), time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000)
        self.assertIsNotNone(self.notify.wait_for("READY"))

        d.proc.send_signal(signal.SIGTERM)
        self.assertIsNotNone(self.notify.wait_for("STOPPING"))
        self.assertEqual(d.proc.wait(timeout=30), 0)

    def test_a_sampler_stuck_from_the_start_is_never_ready_and_never_pets_the_watchdog(self):
        # A FIFO as /proc/vmstat: opening it blocks the first sample forever (as test_daemon's
        # stuck-sampler case); systemd would time the start out and restart the daemon.
        procfs = tempfile.mkdtemp(prefix="memdiag-notify-proc-")
        self.addCleanup(shutil.rmtree, procfs, True)
        shutil.copy(os.path.join(FIXTURES, "kernel-6.18", "proc", "meminfo"), procfs)
        os.mkfifo(os.path.join(procfs, "vmstat"))
        d = self.start("--path.procfs", procfs)
        got = self.notify.receive(4.0)
        self.assertEqual([m for m in got if "READY" in m or "WATCHDOG" in m], [], got)
        self.assertIsNone(d.proc.poll(), "the daemon is alive, only its sampler is stuck")
        # A SIGHUP (logrotate) before it was ever ready says nothing: a READY=1 after the reload
        # would mark the unit active with nothing to serve.
        self.notify.cursor = len(self.notify.messages)
        d.proc.send_signal(signal.SIGHUP)
        got = self.notify.receive(2.0)
        self.assertEqual([m for m in got if "READY" in m or "RELOADING" in m], [], got)
        self.assertIsNone(d.proc.poll())

    def test_without_notify_socket_nothing_is_sent_and_it_runs_as_before(self):
        self.env.pop("NOTIFY_SOCKET")
        d = self.start()
        d.wait_ready()
        self.assertEqual(self.notify.receive(1.5), [])


if __name__ == "__main__":
    unittest.main()
