# SPDX-License-Identifier: Apache-2.0
"""A real Prometheus server (Debian's prometheus 2.x) scrapes the real memdiagd on loopback every
second, with the shipped alert and recording rules loaded, while a bounded workload in a 64 MiB
memory cgroup gets one task OOM-killed and then reclaims its page cache at the limit. Checked
against Prometheus' own answers:
- the scrapes: `up` 1 on every scrape, no sample rejected (out of order, duplicate timestamp,
  out of bounds, over a limit: Prometheus' own counters, all present and 0);
- every query of every shipped Grafana dashboard (deploy/grafana/*.json), found by walking its
  JSON (rows included), with its template variables filled in as Grafana would (the job chosen,
  so every series must carry it; the cluster at All, .*, as the label does not exist here; this
  node as the per-node dashboards' instance, All on the fleet's): it evaluates
  without error, returns data, and every series carries the labels the panel shows (legendFormat
  {{label}}) or groups by (`by (...)`). Two kinds of query may have no data here, each listed
  with its reason and never passed silently: those of Windows-only series (memdiag-windows.json;
  they must parse, return nothing on Linux, and name only series the Windows build exports),
  and those of series that exist only while something happens that this test does not make
  happen on this node (ONLY_WHILE: a scope stalling with members, a clear falling trend for the
  forecasts), which test_fleet.py requires to have data on its stalling fixture node;
- every alert rule evaluates (health ok, no error), and a rule is pending or firing exactly
  when its expression, evaluated by this test at the rule's own evaluation time, returns
  something; the cgroup at its limit must be one of them;
- every recording rule evaluates (health ok, no error), and those a single calm node has data
  for produce series.
A panel that cannot have data here (no eBPF, no PSI, no v1 memory hierarchy for the workload)
is reported as a skipped subtest with the reason."""
import datetime
import glob
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request

import yaml

from harness import REPO, V1_MEMORY, Daemon, V1Cgroup, die_with_parent, free_port, parse_exposition, write

RULES = os.path.join(REPO, "deploy", "prometheus", "memdiag-alerts.yml")
RECORDING = os.path.join(REPO, "deploy", "prometheus", "memdiag-recording.yml")
GRAFANA = os.path.join(REPO, "deploy", "grafana")
DASHBOARD = os.path.join(GRAFANA, "memdiag.json")  # the overview (test_seed_miniature.py uses it too)
DASHBOARDS = sorted(glob.glob(os.path.join(GRAFANA, "*.json")))
WINDOWS_DASHBOARD = os.path.join(GRAFANA, "memdiag-windows.json")
FLEET_DASHBOARD = os.path.join(GRAFANA, "memdiag-fleet.json")
EXPORTERS = os.path.join(REPO, "exporters", "prometheus")
LIMIT = 64 << 20
CGROUP_NAME = "memdiag-prom-%d" % os.getpid()
DEADLINE = 150  # seconds for everything the test waits on; each wait says what it waited for

# Prometheus' counters of samples it refused from a scrape (2.42 names every one of them).
REJECTED = ("prometheus_target_scrapes_sample_out_of_order_total",
            "prometheus_target_scrapes_sample_duplicate_timestamp_total",
            "prometheus_target_scrapes_sample_out_of_bounds_total",
            "prometheus_target_scrapes_exceeded_sample_limit_total",
            "prometheus_target_scrapes_exceeded_body_size_limit_total",
            "prometheus_target_scrape_pool_exceeded_label_limits_total",
            "prometheus_target_scrapes_exemplar_out_of_order_total")
# The storage's own refusals, which also catch a series twice in one scrape (the second sample is
# dropped at commit as out of order): vectors by sample type, absent until something is refused.
REFUSED_BY_STORAGE = ("prometheus_tsdb_out_of_order_samples_total", "prometheus_tsdb_out_of_bound_samples_total",
                      "prometheus_tsdb_too_old_samples_total")


def api(port, path, **params):
    url = "http://127.0.0.1:%d/api/v1/%s?%s" % (port, path, urllib.parse.urlencode(params, doseq=True))
    with urllib.request.urlopen(url, timeout=10) as resp:
        body = json.load(resp)
    assert body["status"] == "success", body
    return body["data"]


def query(port, expr, at=None):
    params = {"query": expr}
    if at is not None:
        params["time"] = at
    return api(port, "query", **params)["result"]


def query_error(port, expr):
    """Prometheus' error for an expression that does not evaluate (bad_data: it does not parse),
    or None when it evaluates."""
    try:
        query(port, expr)
    except urllib.error.HTTPError as e:
        return "%s: %s" % (e.code, e.read().decode(errors="replace"))
    return None


def run_prometheus(tmp, targets, rules=None):
    """A real Prometheus on a free loopback port scraping `targets` (one address or a list) every
    second and evaluating `rules` (one file or a list) every second, its data and log in `tmp`:
    (process, port, log path). Each target is its own instance (its address). The caller stops
    it."""
    port = free_port()
    targets = [targets] if isinstance(targets, str) else list(targets)
    rules = [] if rules is None else [rules] if isinstance(rules, str) else list(rules)
    config = os.path.join(tmp, "prometheus.yml")
    write(config, "global: {scrape_interval: 1s, evaluation_interval: 1s}\n" +
                  ("rule_files: [%s]\n" % ", ".join("'%s'" % r for r in rules) if rules else "") +
                  "scrape_configs:\n"
                  "  - job_name: memdiag\n"
                  "    static_configs: [{targets: [%s]}]\n" % ", ".join("'%s'" % t for t in targets))
    log_path = os.path.join(tmp, "prometheus.log")
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            ["prometheus", "--config.file", config, "--storage.tsdb.path", os.path.join(tmp, "data"),
             "--web.listen-address", "127.0.0.1:%d" % port],
            stdout=subprocess.DEVNULL, stderr=log, preexec_fn=die_with_parent)
    return proc, port, log_path


# Panels whose series exist only while a cgroup scope stalls with members in it (roles, relief,
# the stalling scopes' shortfall): tests/e2e/test_seed_miniature.py makes such a stall and
# evaluates the overview's on a real Prometheus, test_fleet.py every dashboard's on its stalling
# fixture node.
STALLING_SCOPE_SERIES = ("memdiag_cgroup_pressure_role", "memdiag_cgroup_shortfall_bytes")

# Queries that have data only while something happens that test_prometheus does not make happen
# on this node: {a piece of the query: why}. They are evaluated here (no error; the labels of
# whatever they return are checked) and test_fleet.py requires data from each on its stalling
# fixture node.
ONLY_WHILE = {
    "memdiag_cgroup_pressure_role": "only while a scope stalls with members in it (roles)",
    "memdiag_cgroup_shortfall_bytes": "filtered on the cgroup scopes that stall",
    "memdiag:cgroup_pressure_role:workload": "only while a scope stalls with members in it (roles)",
    "memdiag:cgroup_contribution_ratio:workload": "only while a scope stalls with members in it (roles)",
    "memdiag:cgroup_relief_bytes:workload": "only while a scope stalls with members in it (roles)",
    "memdiag:node_stall_reason:max5m": "only while a stall reason holds",
    "sort_desc(max by (instance) (memdiag:node_stall_level:max5m": "only the nodes at medium or worse",
    "memdiag:cgroup_stall_level:workload >= 2": "only the cgroups at medium or worse",
    "memdiag_forecast_exhaustion_seconds": "only while MemAvailable falls clearly (R^2 >= 0.8 over the window)",
    "memdiag_overcommit_exhaustion_seconds": "only while more is promised than can be supplied and it is drawn",
    "memdiag_cgroup_forecast_exhaustion_seconds": "only while a cgroup's available memory falls clearly",
}


def only_while(expr):
    return next((why for piece, why in ONLY_WHILE.items() if piece in expr), None)


def load_dashboard(path):
    with open(path) as f:
        return json.load(f)


def dashboard_targets(dashboard):
    """(panel title, target) of every panel, nested rows' panels included, in dashboard order."""
    def walk(panels):
        for panel in panels:
            for target in panel.get("targets", []):
                if target.get("expr"):
                    yield panel.get("title", "?"), target
            yield from walk(panel.get("panels", []))
    return list(walk(dashboard.get("panels", [])))


def labels_shown(target):
    """The labels a panel needs on each series: those its legend prints and those its outermost
    aggregation groups by (the first `by (...)`; an inner one's labels are aggregated away),
    without `le`, which histogram_quantile consumes (a heatmap's rows are its `le`)."""
    legend = set(re.findall(r'\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}', target.get("legendFormat", "")))
    grouped = set()
    first = re.search(r'\bby\s*\(([^)]*)\)', target["expr"])
    if first:
        grouped.update(l.strip() for l in first.group(1).split(",") if l.strip())
    if target.get("format") == "heatmap":  # its buckets are the rows
        return legend | grouped | {"le"}
    return (legend | grouped) - {"le"}


def without_strings(expr):
    return re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)


def series_names(expr):
    """(names, name regexes) an expression selects: every memdiag_* and memdiag:* name, and
    Prometheus' own names (scrape_*, up); the regexes of {__name__=~"..."} selectors."""
    regexes = set(re.findall(r'__name__\s*=~\s*"((?:[^"\\]|\\.)*)"', expr))
    names = set(re.findall(r'(?<![\w:])((?:memdiag[_:]|scrape_)[a-zA-Z0-9_:]*)', without_strings(expr)))
    return names, regexes


def family(name):
    """The family a histogram's or summary's series belongs to."""
    return re.sub(r"_(bucket|sum|count)$", "", name)


def windows_exported_names():
    """Every family memdiagd.exe can export: the Windows sections' (system memory, commit,
    paging, processes), the canary's and its allocator's, the verdicts' (stall, overcommit, the
    node scope's shortfall and forecast) and the daemon's own, read from the exporter's sources
    that render them on Windows (exporters/prometheus/snapshot_collector.cpp says which)."""
    names = set()
    for source in ("system_memory_metrics.cpp", "canary_metrics.cpp", "overcommit_metrics.cpp", "stall_metrics.cpp"):
        with open(os.path.join(EXPORTERS, source)) as f:
            names |= set(re.findall(r'"(memdiag_[a-z0-9_]+)"', f.read()))
    # From files that render Linux-only families too: only those rendered on every platform.
    for source, shared in (("snapshot_collector.cpp", ("memdiag_source_up", "memdiag_source_duration_seconds",
                                                       "memdiag_build_info", "memdiag_sampler_samples_total",
                                                       "memdiag_sampler_last_sample_timestamp_seconds")),
                           ("pressure_metrics.cpp", ("memdiag_shortfall_bytes",
                                                     "memdiag_forecast_exhaustion_seconds"))):
        with open(os.path.join(EXPORTERS, source)) as f:
            text = f.read()
        for name in shared:
            assert '"%s"' % name in text, "%s no longer renders %s" % (source, name)
        names |= set(shared)
    return names


def rfc3339_seconds(text):
    """Seconds since the epoch of Prometheus' RFC 3339 timestamps (nanoseconds cut to micro)."""
    m = re.fullmatch(r'(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)', text)
    assert m, text
    stamp = datetime.datetime.fromisoformat(m.group(1) + ("+00:00" if m.group(3) == "Z" else m.group(3)))
    return stamp.timestamp() + float("0." + (m.group(2) or "0"))


def promql_regex_literal(value):
    """A value matched literally inside a PromQL "..." regex (Grafana escapes the same way)."""
    return re.sub(r'([\\.+*?()|\[\]{}^$])', r'\\\\\1', value)


BUILT_IN = {"__rate_interval": "4s", "__interval": "1s", "__range": "5m"}  # the 1 s scrape's


def grafana_value(variable, values):
    """What Grafana writes for a variable in a Prometheus query when `values` are selected (None:
    All): All is the variable's allValue; a variable with All or multi has its values
    regex-escaped (one alone, several as (a|b)); a single-valued one (a per-node dashboard's
    instance) has its value as it is, in an = matcher."""
    if values is None:
        assert variable.get("allValue"), "variable %s: All without an allValue" % variable["name"]
        return variable["allValue"]
    if variable.get("includeAll") or variable.get("multi"):
        literal = [promql_regex_literal(v) for v in values]
        return literal[0] if len(literal) == 1 else "(%s)" % "|".join(literal)
    assert len(values) == 1 and not re.search(r'[\\"]', values[0]), (variable["name"], values)
    return values[0]


def grafana_values(dashboard, selected):
    """Each variable's value as Grafana sets it when the values `selected` ({name: value}) are
    chosen and every other variable is at All, without asking Prometheus what exists."""
    values = dict(BUILT_IN)
    for var in dashboard.get("templating", {}).get("list", []):
        if var["type"] != "datasource":
            values[var["name"]] = grafana_value(var, [selected[var["name"]]] if var["name"] in selected else None)
    return values


def template_values(test, port, dashboard, instances=None, selected=None):
    """Each dashboard variable's value as Grafana sets it, in the dashboard's order (a variable's
    query uses those before it, label_values(memdiag_build_info{job=~"$job"}, cluster)): the value
    `selected` ({name: value}) gives, which must be one its query finds; else All for a variable
    with All (its allValue, else every value its query finds); else the one value its query
    finds. The datasource is not in any expression; the built-in intervals get the 1 s scrape's.
    `instances`: how many values the instance variable's query must find."""
    selected = selected or {}
    values = dict(BUILT_IN)
    for var in dashboard.get("templating", {}).get("list", []):
        if var["type"] == "datasource":
            continue
        m = re.fullmatch(r'label_values\((\w+(?:\{[^}]*\})?),\s*(\w+)\)', var["query"])
        test.assertTrue(m, "dashboard variable %s: query %r" % (var["name"], var["query"]))
        match = expand(test, "variable " + var["name"], m.group(1), values)
        found = api(port, "label/%s/values" % m.group(2), **{"match[]": match})
        if var["name"] == "instance" and instances is not None:
            test.assertEqual(len(found), instances, found)
        if var["name"] in selected:
            test.assertIn(selected[var["name"]], found, "variable %s" % var["name"])
            values[var["name"]] = grafana_value(var, [selected[var["name"]]])
        elif var.get("includeAll"):
            values[var["name"]] = grafana_value(var, None if var.get("allValue") else found)
        else:
            test.assertEqual(len(found), 1, "variable %s has no All: which of %s?" % (var["name"], found))
            values[var["name"]] = grafana_value(var, found)
    return values


def expand(test, title, expr, variables):
    for name, value in variables.items():
        expr = expr.replace("${%s}" % name, value).replace("$" + name, value)
    test.assertNotIn("$", expr, "a template variable the test does not know in %r" % title)
    return expr


def assert_labels(test, title, target, result):
    for series in result:
        for label in labels_shown(target):
            test.assertTrue(series["metric"].get(label), "%r: series %s lacks %r" % (title, series["metric"], label))


def recording_rules():
    """The record names of the recording rules file, in order."""
    with open(RECORDING) as f:
        return [r["record"] for g in yaml.safe_load(f)["groups"] for r in g["rules"] if "record" in r]


class PrometheusScrapesMemdiagd(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="memdiag-prom-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.prom = None

    def tearDown(self):
        if self.prom and self.prom.poll() is None:
            self.prom.terminate()
            try:
                self.prom.wait(10)
            except subprocess.TimeoutExpired:
                self.prom.kill()

    def wait(self, what, predicate, detail=lambda: ""):
        """predicate()'s first truthy value, polled until the test's deadline; fails naming what
        (and detail())."""
        error = None
        while time.monotonic() < self.deadline:
            try:
                value = predicate()
                if value:
                    return value
            except OSError as e:
                error = e  # Prometheus not listening yet
            time.sleep(0.25)
        self.fail("waited %d s for %s%s%s" % (DEADLINE, what, detail(),
                                              "; last error: %r" % error if error else ""))

    def start_prometheus(self, target):
        self.prom, self.prom_port, self.prom_log = run_prometheus(self.tmp, target, [RULES, RECORDING])

    def make_cgroup_data(self):
        """An OOM kill, then page cache at the limit, in a 64 MiB v1 memory cgroup: data for the
        eBPF OOM and per-cgroup stall panels, the fullest-cgroup panel and the at-limit rule.
        Returns the cgroup's path, or None (with the reason in self.no_workload)."""
        if os.geteuid() != 0 or not os.path.exists(V1_MEMORY + "/memory.limit_in_bytes"):
            self.no_workload = "needs root and a cgroup v1 memory hierarchy to make a cgroup reclaim and OOM"
            return None
        cgroup = V1Cgroup(CGROUP_NAME, LIMIT)
        self.addCleanup(cgroup.remove)
        # 192 MiB of anonymous memory in 64 MiB: the OOM killer takes it.
        p = cgroup.run("exec python3 -c 'b = bytearray(192 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1'")
        self.assertNotEqual(p.returncode, 0, "the 192 MiB task was not killed in a 64 MiB cgroup")
        # Then 192 MiB of page cache through it: memcg reclaim, and the cache stays charged up to
        # the limit, so the cgroup ends (and stays) at its limit.
        data = os.path.join(self.tmp, "data.bin")
        p = cgroup.run("dd if=/dev/zero of=%s bs=1M count=192 status=none && cat %s > /dev/null" % (data, data))
        self.assertEqual(p.returncode, 0, p.stderr)
        # And it stays there: a reader in the cgroup brings back whatever is reclaimed from it
        # meanwhile (fresh-ci once saw the fill ratio stay under 0.95 for 150 s after the cat).
        reader = subprocess.Popen(["sh", "-c", cgroup.shell('while :; do cat "$0" > /dev/null; sleep 1; done'), data],
                                  preexec_fn=die_with_parent)

        def stop():
            reader.kill()
            reader.wait()
        self.addCleanup(stop)
        return cgroup.path

    def test_dashboard_queries_and_alert_rules_on_real_data(self):
        self.deadline = time.monotonic() + DEADLINE
        config = os.path.join(self.tmp, "memdiagd.yaml")
        # Processes above 0.1 % of vm.max_map_count get memdiag_process_map_areas_above_threshold
        # (every process with 66 mappings here): the map-count panel's per-process series. A
        # 2 s canary cycle gives its histograms increments well within the test.
        # The cgroup source sees only this test's cgroup: other tests' cgroups (the churn test
        # runs beside this one under ctest -j2) would otherwise crowd it out of the
        # nearest-their-limit panel's top 10.
        write(config, "sources:\n"
                      "  processes: {map_areas_threshold: 0.001}\n"
                      "  canary: {interval: 2s}\n"
                      "  cgroup: {include: [\"/%s\"], max_depth: 2}\n" % CGROUP_NAME)
        with Daemon("--config", config) as d:
            d.wait_ready()
            self.start_prometheus(d.address)
            self.wait("Prometheus to hold 3 scrapes of memdiagd",
                      lambda: query(self.prom_port, 'count_over_time(up{job="memdiag"}[1m]) >= 3'))
            cgroup = self.make_cgroup_data()
            here = d.samples()
            linux_families = {family(name) for name, _ in here}
            windows_families = windows_exported_names()

            # --- the dashboards ---
            unmet = self.unmet_requirements(here, cgroup)
            panels = []  # [dashboard, title, target, expression as run, result]
            windows_only = []  # (dashboard, title, expression as run, names)
            left_out = []  # (dashboard, title, why)
            for path in DASHBOARDS:
                dashboard = load_dashboard(path)
                name = os.path.basename(path)
                targets = dashboard_targets(dashboard)
                self.assertGreaterEqual(len(targets), 8, name)
                variables = template_values(self, self.prom_port, dashboard, instances=1, selected={"job": "memdiag"})
                for title, target in targets:
                    expr = expand(self, title, target["expr"], variables)
                    names, _ = series_names(target["expr"])
                    linux_absent = {n for n in names if family(n) not in linux_families and not n.startswith(
                        ("memdiag:", "scrape_"))}
                    if path == WINDOWS_DASHBOARD and linux_absent:
                        self.assertLessEqual({family(n) for n in linux_absent}, windows_families,
                                             "%r uses names the Windows build does not export" % title)
                        windows_only.append((name, title, expr, sorted(linux_absent)))
                        continue
                    panels.append([name, title, target, expr, []])
            self.assertTrue(windows_only, "the Windows dashboard has no Windows-only query: the check is vacuous")

            def every_panel_has_data():
                for panel in panels:
                    if not panel[4]:
                        panel[4] = query(self.prom_port, panel[3])
                return all(p[4] for p in panels if not self.why_empty(p[3], unmet) and not only_while(p[3]))
            self.wait("every dashboard query to return data", every_panel_has_data,
                      lambda: "; none from: " + ", ".join("%s %r: %s" % (p[0], p[1], p[2]["expr"]) for p in panels
                                                         if not p[4] and not self.why_empty(p[3], unmet)
                                                         and not only_while(p[3])) +
                      "; up: %s; the daemon's log ends: %s" % (query(self.prom_port, "up"), d.logs()[-2000:]))
            for name, title, target, expr, result in panels:
                with self.subTest(dashboard=name, panel=title, expr=target["expr"]):
                    why = only_while(expr)
                    if why and not result:
                        # Evaluated (a bad query raised in `query` above); its data is test_fleet's.
                        left_out.append((name, title, why))
                        continue
                    reason = self.why_empty(expr, unmet)
                    if reason and not result:
                        self.skipTest("no data on this machine: " + reason)
                    self.assertTrue(result, "no data")
                    print("%s panel %r: %d series, labels %s" % (name, title, len(result),
                                                                 sorted(labels_shown(target))))
                    assert_labels(self, title, target, result)
            for name, title, expr, names in windows_only:
                with self.subTest(dashboard=name, panel=title, expr=expr):
                    self.assertIsNone(query_error(self.prom_port, expr))
                    self.assertEqual(query(self.prom_port, expr), [], "Windows-only series on Linux")
                    print("%s panel %r: parses; no data on Linux: Windows-only %s" % (name, title, ", ".join(names)))
            for name, title, why in left_out:
                print("%s panel %r: no data here, %s: test_fleet.py evaluates it on a stalling node"
                      % (name, title, why))
            if cgroup:  # the test's cgroup is among those the "nearest their limit" panels show
                fullest = [s["metric"].get("cgroup") for p in panels if "fill_ratio" in p[3] for s in p[4]]
                self.assertIn(cgroup, fullest)
            # values as Prometheus stored them are /proc's and the daemon's
            with open("/proc/meminfo") as f:
                mem_total = int(f.readline().split()[1]) * 1024
            self.assertEqual(float(query(self.prom_port, "memdiag_meminfo_mem_total_bytes")[0]["value"][1]), mem_total)
            up_here = sum(1 for (name, _), v in here.items() if name == "memdiag_source_up" and v == 1)
            self.assertEqual(len(query(self.prom_port, "memdiag_source_up == 1")), up_here)

            # --- the alert and recording rules ---
            with open(RULES) as f:
                shipped = sum(1 for line in f if line.strip().startswith("- alert:"))
            records = recording_rules()
            if cgroup:  # rules evaluated after Prometheus has stored the cgroup at its limit
                self.wait("the cgroup's fill ratio above 0.95 in Prometheus", lambda: query(
                    self.prom_port, 'memdiag_cgroup_memory_fill_ratio{cgroup="%s"} > 0.95' % cgroup),
                    lambda: "; it is %s" % query(self.prom_port, 'memdiag_cgroup_memory_fill_ratio{cgroup="%s"}' % cgroup))
            since = time.time()
            rules = self.wait("every rule to have been evaluated", lambda: self.evaluated_rules(since))
            self.assertEqual(sorted(r["name"] for r in rules if r["type"] == "recording"), sorted(records))
            alerts = [r for r in rules if r["type"] == "alerting"]
            self.assertEqual(len(alerts), shipped)
            holding = set()
            for rule in rules:
                with self.subTest(rule=rule["name"]):
                    self.assertEqual(rule["health"], "ok", rule)
                    self.assertFalse(rule.get("lastError"), rule)
                    if rule["type"] == "alerting" and self.rule_state_matches_its_expression(rule["name"]):
                        holding.add(rule["name"])
            print("rules holding (pending or firing): %s" % sorted(holding))
            if cgroup:
                # The test's cgroup is at its limit in usage, but with page cache reclaim can
                # give back: its working set leaves it room, so the rule (which reads the
                # working set, as the kubelet does) must not hold. promtool's tests make it fire.
                self.assertNotIn("MemdiagCgroupAtLimit", holding,
                                 "a cgroup full of page cache made the working-set rule pending")
                fill = query(self.prom_port, 'memdiag_cgroup_memory_fill_ratio{cgroup="/%s"}' % CGROUP_NAME)
                self.assertTrue(fill and float(fill[0]["value"][1]) > 0.9, fill)
            for record in records:
                with self.subTest(record=record):
                    result = query(self.prom_port, record)
                    why = only_while(record) or only_while(next(r["query"] for r in rules if r["name"] == record))
                    if why and not result:
                        print("record %s: no series here, %s: test_fleet.py checks it" % (record, why))
                        continue
                    self.assertTrue(result, "record %s has no series" % record)
                    print("record %s: %d series" % (record, len(result)))

            # --- the scrapes themselves ---
            self.assertEqual(query(self.prom_port, 'min_over_time(up{job="memdiag"}[5m])')[0]["value"][1], "1")
            scraped = query(self.prom_port, 'sum_over_time(scrape_samples_scraped{job="memdiag"}[5m])')
            kept = query(self.prom_port, 'sum_over_time(scrape_samples_post_metric_relabeling{job="memdiag"}[5m])')
            self.assertEqual(scraped[0]["value"][1], kept[0]["value"][1])
            # Prometheus 2.42 keeps one sample of a series exposed twice in a scrape and counts
            # nothing: the series it stored at the last scrape's instant must be as many as the
            # samples it read (a series gone from that scrape has a staleness marker there; the
            # alerts' own series carry the job label of theirs, and so do the records).
            # Both read at the last stored scrape's own timestamp: an instant query's "now" may
            # fall between a scrape's start and its commit, and then the two would describe
            # different scrapes.
            at = query(self.prom_port, 'timestamp(scrape_samples_scraped{job="memdiag"})')[0]["value"][1]
            exposed = query(self.prom_port, 'scrape_samples_scraped{job="memdiag"}', at=at)[0]["value"][1]
            stored = query(self.prom_port,
                           'count({job="memdiag",__name__!~"up|scrape_.+|ALERTS|ALERTS_FOR_STATE|memdiag:.+"})', at=at)
            self.assertEqual(stored[0]["value"][1], exposed, "series exposed more than once in one scrape")
            with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % self.prom_port, timeout=10) as resp:
                own = parse_exposition("\n".join(l for l in resp.read().decode().splitlines()
                                                 if not l.startswith("#")))
            for name in REJECTED:
                values = [v for (n, _), v in own.items() if n == name]
                self.assertTrue(values, "Prometheus no longer exports %s: the check would pass vacuously" % name)
                self.assertEqual(sum(values), 0, name)
            for name in REFUSED_BY_STORAGE:
                self.assertEqual(sum(v for (n, _), v in own.items() if n == name), 0, name)
            with open(self.prom_log) as f:
                self.assertNotIn("Error on ingesting", f.read())

    def unmet_requirements(self, samples, cgroup):
        """{metric prefix: why it cannot have data here} for the data this machine cannot make."""
        unmet = {}
        if samples.get(("memdiag_source_up", '{source="reclaim_stall"}')) != 1:
            for prefix in ("memdiag_reclaim_stall", "memdiag_oom_victims"):
                unmet[prefix] = 'the eBPF source is down (memdiag_source_up{source="reclaim_stall"} 0, see the log)'
        if samples.get(("memdiag_source_up", '{source="pressure"}')) != 1:
            unmet["memdiag_pressure_"] = "this kernel has no PSI"
            unmet["memdiag_cgroup_pressure_ratio"] = "this kernel has no PSI"
            unmet["memdiag:node_memory_pressure"] = "this kernel has no PSI"
        if cgroup is None:
            for prefix in ("memdiag_reclaim_stall_seconds_bucket", "memdiag_reclaim_stall_seconds_sum",
                           "memdiag_oom_victims_total", "memdiag_cgroup_"):
                unmet.setdefault(prefix, self.no_workload)
        return unmet

    @staticmethod
    def why_empty(expr, unmet):
        return next((why for prefix, why in unmet.items() if prefix in expr), None)

    def evaluated_rules(self, since):
        """Every rule, once each has been evaluated after `since` (seconds since the epoch)."""
        rules = [r for g in api(self.prom_port, "rules")["groups"] for r in g["rules"]]
        done = rules and all(rfc3339_seconds(r.get("lastEvaluation", "0001-01-01T00:00:00Z")) > since for r in rules)
        return rules if done else None

    def rule_state_matches_its_expression(self, name):
        """Whether the rule's expression returns something, evaluated at the instant Prometheus
        last evaluated the rule, and asserts the rule's state says the same (pending or firing
        iff it does, one alert per series). A scrape whose samples are appended just after the
        evaluation can make the two differ for one evaluation when a value crosses the
        threshold, so a disagreement is looked at again at the next evaluations (3 in all)."""
        seen = []
        last_evaluation = None
        for _ in range(3):
            # the rule as Prometheus evaluated it next, not the same evaluation looked at again
            rule = self.wait("rule %s to be evaluated again" % name,
                             lambda: next((r for g in api(self.prom_port, "rules")["groups"] for r in g["rules"]
                                           if r["name"] == name and r["lastEvaluation"] != last_evaluation), None))
            last_evaluation = rule["lastEvaluation"]
            result = query(self.prom_port, rule["query"], at=rule["lastEvaluation"])
            active = [a for a in rule.get("alerts", []) if a["state"] in ("pending", "firing")]
            state_holds = rule["state"] in ("pending", "firing")
            if state_holds == bool(result) and len(active) == len(result):
                return bool(result)
            seen.append((rule["lastEvaluation"], rule["state"], len(active), len(result)))
        self.fail("rule %s: state disagrees with its expression at each of 3 evaluations "
                  "(evaluated at, state, active alerts, series returned): %s" % (name, seen))


if __name__ == "__main__":
    unittest.main()
