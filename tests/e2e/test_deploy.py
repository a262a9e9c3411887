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

from harness import MEMDIAGD, REPO, Daemon, free_port, run, wait_for

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


def unit_directives(text, section):
    """{key: [values]} of one section of a unit file, as systemd reads it (later lines add)."""
    directives, current = {}, None
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            current = line.strip("[]")
        elif current == section:
            key, _, value = line.partition("=")
            directives.setdefault(key.strip(), []).append(value.strip())
    return directives


@unittest.skipUnless(shutil.which("systemd-analyze"), "needs systemd-analyze")
class SystemdRestartAndReload(unittest.TestCase):
    """What the unit promises about restarts and reloads, held against what the daemon does.

    Not run as a real unit: this machine (and the CI container) has no systemd as PID 1
    (`ps -p 1` is the container's init), so systemd-run has no manager to talk to. What can be
    checked here is checked: the unit verifies (SystemdUnit above), its directives are the ones
    the README describes, the daemon's exit code for a bad config is the one the unit does not
    restart on, and the unit's ExecReload command, run as systemd would run it, reloads it."""

    def service(self):
        with open(UNIT) as f:
            return unit_directives(f.read(), "Service")

    def test_a_bad_config_exits_with_the_status_the_unit_does_not_restart_on(self):
        service = self.service()
        self.assertEqual(service.get("Restart"), ["on-failure"])
        self.assertEqual(service.get("RestartPreventExitStatus"), ["2"])
        with tempfile.TemporaryDirectory() as tmp:
            bad = os.path.join(tmp, "memdiagd.yaml")
            with open(bad, "w") as f:
                f.write("sampler: {interval: sometimes}\n")
            p = run("--config", bad, "--web.listen-address", "127.0.0.1:%d" % free_port())
        self.assertEqual(p.returncode, int(service["RestartPreventExitStatus"][0]), p.stderr)
        self.assertIn("sampler.interval", p.stderr)
        # A failure the unit does restart on (the address taken) is another status.
        with Daemon() as holder:
            holder.wait_ready()
            p = run("--web.listen-address", holder.address)
        self.assertEqual(p.returncode, 1, p.stderr)

    def test_exec_reload_reloads_the_daemon(self):
        reload = self.service().get("ExecReload")
        self.assertEqual(reload, ["/bin/kill -HUP $MAINPID"])
        with tempfile.TemporaryDirectory() as tmp:
            config = os.path.join(tmp, "memdiagd.yaml")
            port = free_port()
            listen = 'web: {listen_address: "127.0.0.1:%d"}\nsampler: {interval: 200ms}\n' % port
            with open(config, "w") as f:
                f.write(listen)
            with Daemon("--config", config, port=port, listen_flag=False) as d:
                d.wait_ready()
                self.assertIn(("memdiag_vmstat_pgfault_total", ""), d.samples())
                with open(config, "w") as f:
                    f.write(listen + "sources: {vmstat: {enabled: false}}\n")
                # systemd substitutes $MAINPID and runs the command line as given.
                argv = reload[0].replace("$MAINPID", str(d.proc.pid)).split()
                self.assertEqual(subprocess.run(argv, timeout=10).returncode, 0)
                self.assertTrue(wait_for(lambda: "SIGHUP: reloaded" in d.logs()), d.logs())
                self.assertTrue(wait_for(lambda: ("memdiag_vmstat_pgfault_total", "") not in d.samples()))
                self.assertIsNone(d.proc.poll(), "a reload must not stop the daemon")
                self.assertEqual(d.stop(), 0)


if __name__ == "__main__":
    unittest.main()
