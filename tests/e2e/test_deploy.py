"""What deploy/ ships, checked with the tools that will read it: the alert rules load in promtool
and pass their unit tests (each alert fires on what should fire it), every metric they and the
Grafana dashboard use is one the real daemon exports (test_prometheus.py runs both in a real
Prometheus), the scrape job is valid config, and the systemd unit passes `systemd-analyze verify` with its ExecStart
pointing at the built daemon and the example config (which the daemon accepts)."""
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from harness import MEMDIAGD, REPO, run

DEPLOY = os.path.join(REPO, "deploy")
RULES = os.path.join(DEPLOY, "prometheus", "memdiag-alerts.yml")
RULE_TESTS = os.path.join(DEPLOY, "prometheus", "memdiag-alerts.test.yml")
UNIT = os.path.join(DEPLOY, "systemd", "memdiagd.service")
EXAMPLE_CONFIG = os.path.join(DEPLOY, "memdiagd.yaml")
DASHBOARD = os.path.join(DEPLOY, "grafana", "memdiag.json")


def tool(*args):
    p = subprocess.run(args, capture_output=True, text=True, timeout=60)
    return p.returncode, (p.stdout + p.stderr).strip()


class AlertRules(unittest.TestCase):
    def test_rules_load_and_their_unit_tests_pass(self):
        rc, out = tool("promtool", "check", "rules", RULES)
        self.assertEqual(rc, 0, out)
        with open(RULES) as f:
            alerts = sum(1 for line in f if line.strip().startswith("- alert:"))
        self.assertGreaterEqual(alerts, 9)
        self.assertIn("SUCCESS: %d rules found" % alerts, out)
        rc, out = tool("promtool", "test", "rules", RULE_TESTS)
        self.assertEqual(rc, 0, out)

    def test_scrape_job_is_valid_prometheus_config(self):
        rc, out = tool("promtool", "check", "config", "--syntax-only", os.path.join(DEPLOY, "prometheus", "scrape.yml"))
        self.assertEqual(rc, 0, out)

    def test_every_metric_the_rules_and_the_dashboard_use_is_exported_by_the_daemon(self):
        p = run("--once", "--config", EXAMPLE_CONFIG, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        families = set(re.findall(r"^# TYPE (\S+) ", p.stdout, re.M))
        for path in (RULES, DASHBOARD):
            with open(path) as f:
                used = set(re.findall(r"\bmemdiag_[a-z0-9_]+", f.read()))
            self.assertGreater(len(used), 5, path)
            missing = sorted(n for n in used if re.sub(r"_(bucket|sum|count)$", "", n) not in families)
            self.assertEqual(missing, [], "%s uses metrics the daemon does not export" % path)


@unittest.skipUnless(shutil.which("systemd-analyze"), "needs systemd-analyze")
class SystemdUnit(unittest.TestCase):
    def verify(self, text):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "memdiagd.service")
            with open(path, "w") as f:
                f.write(text)
            return tool("systemd-analyze", "verify", path)

    def installed_here(self):
        with open(UNIT) as f:
            text = f.read()
        self.assertIn("ExecStart=/usr/local/bin/memdiagd --config /etc/memdiag/memdiagd.yaml", text)
        return text.replace("/usr/local/bin/memdiagd", MEMDIAGD).replace("/etc/memdiag/memdiagd.yaml", EXAMPLE_CONFIG)

    def test_unit_verifies_and_its_config_is_accepted(self):
        rc, out = self.verify(self.installed_here())
        self.assertEqual((rc, out), (0, ""))
        p = run("--check-config", "--config", EXAMPLE_CONFIG)
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_a_broken_unit_is_noticed(self):
        """The check above can fail: systemd-analyze complains about a bad value."""
        rc, out = self.verify(self.installed_here().replace("Restart=on-failure", "Restart=sometimes"))
        self.assertIn("restart specifier", out)


if __name__ == "__main__":
    unittest.main()
