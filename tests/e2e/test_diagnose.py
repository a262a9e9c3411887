# SPDX-License-Identifier: Apache-2.0
"""`memdiagd diagnose` and /api/v1/diagnosis from outside: against a running daemon
(JSON that parses, with the schema's fields; text in 80 columns), with no daemon listening and
with one that accepts and never answers (both fall back to sampling this node, say so on
stderr, and still print a report, in bounded time), and bad arguments or queries (exit 2, 400).
"""
import json
import os
import socket
import subprocess
import time
import unittest

from harness import MEMDIAGD, Daemon, free_port, http_get, wait_for_samples

CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "interval-200ms.yaml")


def diagnose(*args, timeout=60):
    return subprocess.run([MEMDIAGD, "diagnose", *args], capture_output=True, text=True, timeout=timeout)


class DiagnoseTest(unittest.TestCase):
    def check_report(self, report, origin):
        self.assertEqual(report["schema"], "memdiag.diagnosis/v1")
        self.assertEqual(report["origin"], origin)
        self.assertIn(report["stall"]["level"]["name"], ["none", "low", "medium", "high", "critical"])
        self.assertEqual(report["stall"]["level"]["value"],
                         ["none", "low", "medium", "high", "critical"].index(report["stall"]["level"]["name"]))
        for key in ("reasons", "signals", "figures", "contributors", "victims"):
            self.assertIn(key, report["stall"])
        self.assertIn("meminfo", report["stall"]["signals"])
        self.assertGreater(report["stall"]["available_bytes"], 0)
        self.assertIn(report["overcommit"]["mode"], ["heuristic", "always", "never"])
        self.assertTrue(report["overcommit"]["mode_known"])
        self.assertIn("vm.overcommit_memory=", report["overcommit"]["mode_meaning"])
        self.assertIsInstance(report["timeline"], list)
        self.assertIsInstance(report["next_steps"], list)
        self.assertIsInstance(report["cgroup_scopes_judged"], int)

    def test_against_a_running_daemon(self):
        with Daemon("--config", CONFIG) as d:
            d.wait_ready()
            wait_for_samples(d, 5)
            url = "http://%s/api/v1/diagnosis" % d.address
            out = diagnose("--url", url, "--format", "json")
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertEqual(out.stderr, "")
            self.check_report(json.loads(out.stdout), "daemon")
            text = diagnose("--url", url, "--since", "1m")
            self.assertEqual(text.returncode, 0, text.stderr)
            self.assertTrue(text.stdout.startswith("memdiag diagnosis, "), text.stdout)
            self.assertIn("NODE STALL: ", text.stdout)
            self.assertIn("OVERCOMMIT RISK: ", text.stdout)
            self.assertTrue(all(len(line) <= 80 for line in text.stdout.splitlines()), text.stdout)

            status, body = http_get(d.port, "/api/v1/diagnosis?format=xml")
            self.assertEqual(status, 400)
            self.assertIn("format must be json or text", body)
            status, body = http_get(d.port, "/api/v1/diagnosis?since=5m")
            self.assertEqual(status, 200)
            self.check_report(json.loads(body), "daemon")

    def test_without_a_daemon_it_samples_itself(self):
        url = "http://127.0.0.1:%d/api/v1/diagnosis" % free_port()
        started = time.monotonic()
        out = diagnose("--url", url, "--format", "json", "--config", CONFIG)
        took = time.monotonic() - started
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("no diagnosis from " + url, out.stderr)
        self.assertIn("sampling this node for 5 s instead", out.stderr)
        self.check_report(json.loads(out.stdout), "local")
        self.assertGreater(took, 4.5)  # it did sample for the duration
        # --duration samples without asking anyone; a bare number is seconds.
        for duration in ("1s", "1"):
            started = time.monotonic()
            out = diagnose("--duration", duration, "--config", CONFIG)
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertIn("(local)", out.stdout)
            self.assertNotIn("no diagnosis from", out.stderr)
            # Sampled for about a second (its last sample comes just before the end), not 1 ms.
            self.assertGreater(time.monotonic() - started, 0.5, "--duration %s did not sample for 1 s" % duration)

    def test_a_daemon_that_never_answers_does_not_hang_it(self):
        # Listening, never accepting: the kernel completes the connection, and nothing answers.
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        try:
            started = time.monotonic()
            out = diagnose("--url", "http://127.0.0.1:%d/api/v1/diagnosis" % listener.getsockname()[1],
                           "--timeout", "1s", "--format", "json", "--config", CONFIG)
            took = time.monotonic() - started
        finally:
            listener.close()
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("no complete answer within the timeout", out.stderr)
        self.check_report(json.loads(out.stdout), "local")
        self.assertLess(took, 1 + 5 + 20, "timeout, local sampling and start-up only")

    def test_bad_arguments_exit_2(self):
        for args in (["--format", "yaml"], ["--since", "soon"], ["--duration", "0s"], ["--bogus"], ["--url"]):
            out = diagnose(*args)
            self.assertEqual(out.returncode, 2, args)
            self.assertIn("memdiagd diagnose: ", out.stderr)
            self.assertIn("usage: memdiagd diagnose", out.stderr)
        self.assertEqual(diagnose("--help").returncode, 0)


if __name__ == "__main__":
    unittest.main()
