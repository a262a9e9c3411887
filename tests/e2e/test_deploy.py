# SPDX-License-Identifier: Apache-2.0
"""What deploy/ ships, checked with the tools that will read it: the alert and recording rules load
in promtool and pass their unit tests (each alert fires on what should fire it and resolves
after), every metric they and the Grafana dashboards use is one the real daemon exports (the
Windows dashboard's Windows-only names are ones the Windows build exports; test_prometheus.py
and test_fleet.py run them all in a real Prometheus), every dashboard has the datasource and
instance variables and filters every query on the instance (test_dashboards.py holds the rest of
their conventions: job and cluster, levels, links, annotations), the scrape job is valid config, and
the systemd unit passes `systemd-analyze verify` with its ExecStart pointing at the built daemon
and the example config (which the daemon accepts)."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import yaml

from harness import FIXTURES, MEMDIAGD, REPO, Daemon, free_port, run, wait_for, wait_for_samples
from test_dashboards import FLEET, VARIABLE_QUERIES, selectors
from test_prometheus import DASHBOARDS, EXPORTERS, WINDOWS_DASHBOARD, family, series_names, windows_exported_names

DEPLOY = os.path.join(REPO, "deploy")
RULES = os.path.join(DEPLOY, "prometheus", "memdiag-alerts.yml")
RULE_TESTS = os.path.join(DEPLOY, "prometheus", "memdiag-alerts.test.yml")
RECORDING = os.path.join(DEPLOY, "prometheus", "memdiag-recording.yml")
RECORDING_TESTS = os.path.join(DEPLOY, "prometheus", "memdiag-recording.test.yml")
UNIT = os.path.join(DEPLOY, "systemd", "memdiagd.service")
EXAMPLE_CONFIG = os.path.join(DEPLOY, "memdiagd.yaml")
DASHBOARD = os.path.join(DEPLOY, "grafana", "memdiag.json")
# Families the daemon exports only while they have a value: the forecasts, given only while a
# trend is clear (docs/verdicts.md "Stall verdict"). Each must be rendered by the exporter source named.
CONDITIONAL = {"memdiag_forecast_exhaustion_seconds": "pressure_metrics.cpp",
               "memdiag_cgroup_forecast_exhaustion_seconds": "pressure_metrics.cpp",
               "memdiag_overcommit_exhaustion_seconds": "overcommit_metrics.cpp"}


def tool(*args):
    p = subprocess.run(args, capture_output=True, text=True, timeout=60)
    return p.returncode, (p.stdout + p.stderr).strip()


def load_yaml(path):
    with open(path) as f:
        return yaml.safe_load(f)


def rules_of(path, kind):
    return [r for g in load_yaml(path)["groups"] for r in g["rules"] if kind in r]


def duration_seconds(text):
    return sum(int(n) * {"s": 1, "m": 60, "h": 3600}[u] for n, u in re.findall(r"(\d+)([smh])", str(text)))


class AlertRules(unittest.TestCase):
    def test_rules_load_and_their_unit_tests_pass(self):
        rc, out = tool("promtool", "check", "rules", RULES)
        self.assertEqual(rc, 0, out)
        with open(RULES) as f:
            alerts = sum(1 for line in f if line.strip().startswith("- alert:"))
        self.assertGreaterEqual(alerts, 21)
        self.assertIn("SUCCESS: %d rules found" % alerts, out)
        rc, out = tool("promtool", "test", "rules", RULE_TESTS)
        self.assertEqual(rc, 0, out)

    def test_every_alert_is_tested_firing_and_then_resolved(self):
        """Each alert has a promtool case where it fires and, in the same case (the same series),
        a later evaluation where it does not: the series went back to normal and it resolved."""
        tests = load_yaml(RULE_TESTS)
        self.assertEqual(tests["rule_files"], [os.path.basename(RULES)])
        fired, resolved = set(), set()
        for case in tests["tests"]:
            evals = sorted(((duration_seconds(t["eval_time"]), t["alertname"], bool(t.get("exp_alerts")))
                            for t in case["alert_rule_test"]), key=lambda e: e[0])
            for at, name, fires in evals:
                if fires:
                    fired.add(name)
                    if any(later > at and other == name and not f for later, other, f in evals):
                        resolved.add(name)
        alerts = {r["alert"] for r in rules_of(RULES, "alert")}
        self.assertEqual(alerts - fired, set(), "alerts no test makes fire")
        self.assertEqual(alerts - resolved, set(), "alerts no test shows resolving after firing")
        self.assertEqual(fired - alerts, set(), "tests of alerts that do not exist")

    def test_every_alert_says_what_and_how_severe(self):
        for rule in rules_of(RULES, "alert"):
            with self.subTest(alert=rule["alert"]):
                self.assertIn(rule["labels"]["severity"], ("info", "warning", "critical"))
                self.assertIn("summary", rule["annotations"])

    def test_recording_rules_load_and_their_unit_tests_pass(self):
        rc, out = tool("promtool", "check", "rules", RECORDING)
        self.assertEqual(rc, 0, out)
        records = rules_of(RECORDING, "record")
        self.assertGreaterEqual(len(records), 10)
        self.assertIn("SUCCESS: %d rules found" % len(records), out)
        for rule in records:  # recording outputs never clash with the daemon's names
            self.assertRegex(rule["record"], r"^memdiag:[a-z0-9_]+:[a-z0-9_]+$")
        rc, out = tool("promtool", "test", "rules", RECORDING_TESTS)
        self.assertEqual(rc, 0, out)
        # every record is looked at by the unit tests
        tested = " ".join(t["expr"] for case in load_yaml(RECORDING_TESTS)["tests"]
                          for t in case.get("promql_expr_test", []))
        self.assertEqual([r["record"] for r in records if r["record"] not in tested], [])

    def test_scrape_job_is_valid_prometheus_config(self):
        rc, out = tool("promtool", "check", "config", "--syntax-only", os.path.join(DEPLOY, "prometheus", "scrape.yml"))
        self.assertEqual(rc, 0, out)

    def exported_families(self):
        """Every family the daemon exports on the example config: its first sample's (--once)
        and, from a running daemon's third sample, those derived from the ring (the stall
        evidence, the shortfall); the per-cgroup families of cgroups with a limit, from the
        cgroup v2 fixture tree (this machine may have no such cgroup at the moment); and the
        conditional forecasts."""
        p = run("--once", "--config", EXAMPLE_CONFIG, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        families = set(re.findall(r"^# TYPE (\S+) ", p.stdout, re.M))
        tree = os.path.join(FIXTURES, "cgroup-v2")
        p = run("--once", "--path.procfs", os.path.join(tree, "proc"), "--path.sysfs", os.path.join(tree, "sys"),
                "--config", os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden-cgroup-v2.yaml"),
                timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        families |= set(re.findall(r"^# TYPE (\S+) ", p.stdout, re.M))
        with Daemon("--config", EXAMPLE_CONFIG) as d:
            d.wait_ready()
            samples = wait_for_samples(d, 3)
        families |= {family(name) for name, _ in samples}
        for name, source in CONDITIONAL.items():
            with open(os.path.join(EXPORTERS, source)) as f:
                self.assertIn('"%s"' % name, f.read(), "%s no longer renders %s" % (source, name))
        return families | set(CONDITIONAL)

    def test_every_metric_the_rules_and_the_dashboards_use_is_exported_by_the_daemon(self):
        families = self.exported_families()
        windows = windows_exported_names()
        records = {r["record"] for r in rules_of(RECORDING, "record")}
        for path in [RULES, RECORDING] + DASHBOARDS:
            with self.subTest(path=os.path.basename(path)):
                with open(path) as f:
                    text = f.read()
                if path.endswith(".json"):
                    exprs = [t["expr"] for t in self.targets(json.loads(text))]
                else:
                    exprs = [r["expr"] for g in yaml.safe_load(text)["groups"] for r in g["rules"]]
                names, regexes = set(), set()
                for expr in exprs:
                    n, r = series_names(expr)
                    names |= n
                    regexes |= r
                self.assertGreater(len(names), 5, path)
                daemon = {n for n in names if n.startswith("memdiag_")}
                self.assertEqual(sorted(n for n in names if n.startswith("memdiag:") and n not in records), [],
                                 "%s uses recording rules that do not exist" % path)
                if path == WINDOWS_DASHBOARD:
                    # a mixed fleet: each name either Linux's too, or the Windows build's own
                    missing = sorted(n for n in daemon if family(n) not in families | windows)
                    windows_only = sorted(n for n in daemon if family(n) not in families)
                    self.assertEqual([n for n in windows_only if family(n) not in windows], [])
                    self.assertTrue(windows_only, "the Windows dashboard uses no Windows-only series")
                else:
                    missing = sorted(n for n in daemon if family(n) not in families)
                self.assertEqual(missing, [], "%s uses metrics the daemon does not export" % path)
                for regex in regexes:
                    self.assertTrue(any(re.fullmatch(regex, f) for f in families),
                                    "%s: {__name__=~%r} matches nothing the daemon exports" % (path, regex))

    @staticmethod
    def targets(dashboard):
        def walk(panels):
            for panel in panels:
                yield from (t for t in panel.get("targets", []) if t.get("expr"))
                yield from walk(panel.get("panels", []))
        return list(walk(dashboard.get("panels", [])))


class Dashboards(unittest.TestCase):
    """Every dashboard as Grafana imports it: a datasource variable of type prometheus and an
    instance variable from memdiag_build_info (one node, no All, on the per-node dashboards; All
    on the fleet's); every panel and query on that datasource; every series selector of every
    query filtered on the instance (instance="$instance" on the per-node dashboards,
    instance=~"$instance" on the fleet's); unique panel ids."""

    def test_the_dashboards_shipped(self):
        names = {os.path.basename(p) for p in DASHBOARDS}
        self.assertLessEqual({"memdiag.json", "memdiag-node.json", "memdiag-cgroups.json", "memdiag-processes.json",
                              "memdiag-canary.json", "memdiag-windows.json", "memdiag-fleet.json"}, names)

    def test_variables_datasource_and_instance_filter(self):
        uids = set()
        for path in DASHBOARDS:
            with self.subTest(dashboard=os.path.basename(path)):
                with open(path) as f:
                    dashboard = json.load(f)
                self.assertNotIn(dashboard["uid"], uids)
                uids.add(dashboard["uid"])
                variables = {v["name"]: v for v in dashboard["templating"]["list"]}
                self.assertEqual(variables["datasource"]["type"], "datasource")
                self.assertEqual(variables["datasource"]["query"], "prometheus")
                self.assertEqual(variables["instance"]["query"], VARIABLE_QUERIES["instance"])
                self.assertEqual(variables["instance"]["datasource"], {"type": "prometheus", "uid": "${datasource}"})
                fleet = os.path.basename(path) == FLEET
                self.assertEqual((variables["instance"]["multi"], variables["instance"]["includeAll"]), (fleet, fleet))
                instance_filter = 'instance=~"$instance"' if fleet else 'instance="$instance"'
                ids = []

                def walk(panels):
                    for panel in panels:
                        ids.append(panel["id"])
                        if panel["type"] != "row":
                            self.assertEqual(panel["datasource"], {"type": "prometheus", "uid": "${datasource}"},
                                             panel["title"])
                            self.assertTrue(panel.get("targets"), panel["title"])
                        for target in panel.get("targets", []):
                            self.assertEqual(target["datasource"]["uid"], "${datasource}", panel["title"])
                            for selector in selectors(target["expr"]):
                                self.assertIn(instance_filter, selector,
                                              "%r: %s is not filtered on the instance" % (panel["title"], selector))
                        walk(panel.get("panels", []))
                walk(dashboard["panels"])
                self.assertEqual(len(ids), len(set(ids)), "panel ids repeat")


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
    docs/install.md describes, the daemon's exit code for a bad config is the one the unit does not
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
