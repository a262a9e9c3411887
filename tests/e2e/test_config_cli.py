# SPDX-License-Identifier: Apache-2.0
"""The config contract through the real binary: every file under tests/fixtures/config/bad is
refused by --check-config with exit code 2 naming the file, line and key its header expects."""
import glob
import os
import re
import signal
import subprocess
import tempfile
import unittest

from harness import FIXTURES, MEMDIAGD, REPO, free_port, run, wait_for

def read_text(path):
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return ""


BAD = sorted(glob.glob(os.path.join(FIXTURES, "config", "bad", "*.yaml")))


class CheckConfig(unittest.TestCase):
    def test_shipped_example_is_valid(self):
        p = run("--check-config", "--config", os.path.join(REPO, "deploy", "memdiagd.yaml"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(": ok", p.stdout)

    def test_every_bad_config_is_refused_with_file_line_key(self):
        self.assertGreaterEqual(len(BAD), 10)
        for path in BAD:
            with self.subTest(config=os.path.basename(path)):
                with open(path) as f:
                    header = f.readline()
                m = re.match(r"# expect: line=(\d+) key=(\S+) reason=(.+)$", header.strip())
                self.assertIsNotNone(m, "bad header in %s" % path)
                line, key, reason = m.groups()
                p = run("--check-config", "--config", path)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertIn("%s:%s: %s: " % (path, line, key), p.stderr)
                self.assertIn(reason, p.stderr)
                self.assertNotIn("terminate", p.stderr)

    def test_bad_config_never_starts_the_daemon(self):
        p = run("--config", BAD[0], timeout=10)
        self.assertEqual(p.returncode, 2)
        self.assertIn("invalid config", p.stderr)

    def test_missing_config_file(self):
        p = run("--check-config", "--config", "/nonexistent/memdiagd.yaml")
        self.assertEqual(p.returncode, 2)
        self.assertIn("/nonexistent/memdiagd.yaml", p.stderr)

    def test_bad_flags_exit_2(self):
        for args in (["--bogus"], ["--web.listen-address", "nowhere"], ["--log.level", "loud"],
                     ["--sampler.interval", "1s"], ["--path.procfs", "relative"],
                     ["--console"],  # Windows's: Linux has no service mode to leave
                     ["--log.file", "/proc/no-such-dir/memdiagd.log"]):
            with self.subTest(args=args):
                p = run(*args, timeout=10)
                self.assertEqual(p.returncode, 2, p.stderr)

    def test_log_file_gets_what_stderr_gets(self):
        with tempfile.TemporaryDirectory() as work:
            log_file = os.path.join(work, "logs", "memdiagd.log")  # its folder is made
            port = free_port()
            p = subprocess.Popen([MEMDIAGD, "--web.listen-address", "127.0.0.1:%d" % port, "--log.file", log_file],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            try:
                self.assertTrue(wait_for(lambda: "serving on" in read_text(log_file), timeout=20))
            finally:
                p.send_signal(signal.SIGTERM)
                _, stderr = p.communicate(timeout=30)
            self.assertEqual(p.returncode, 0, stderr)
            logged = read_text(log_file)
            self.assertIn("received SIGTERM, stopping", logged)
            self.assertIn("received SIGTERM, stopping", stderr)

    def test_help_and_version(self):
        self.assertIn("--check-config", run("--help").stdout)
        self.assertRegex(run("--version").stdout, r"^memdiagd \d+\.\d+\.\d+")


if __name__ == "__main__":
    unittest.main()
