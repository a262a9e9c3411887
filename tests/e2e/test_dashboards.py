# SPDX-License-Identifier: Apache-2.0
"""The Grafana conventions of the shipped dashboards (deploy/grafana/*.json), read from their JSON
alone: no daemon, no Prometheus, no Grafana. test_prometheus.py and test_fleet.py evaluate their
queries on a real Prometheus; this test holds what people on call expect of them:
- every panel but the rows has a description (what it shows, in which unit, what to read from it);
- every panel whose value is a level (0..4: the stall, overcommit and breaking verdicts, a
  cgroup's stall level, and the recording rules made of them) maps 0 none, 1 low, 2 medium,
  3 high, 4 critical to names and colours and has absolute thresholds of the same colours, 0..4
  on a graph; a panel that only counts or filters by a level (a count of nodes, bytes of the
  stalling scopes) does not, so "2 nodes" never reads "medium";
- the variables: datasource, job, cluster (All matches .*, so series without a cluster label
  still match) and instance from memdiag_build_info narrowed by job and cluster; on the per-node
  dashboards instance has no All and is not multi (no panel ever sums several nodes), on the
  fleet dashboard All is .*;
- every series selector of every query filters on job, on the instance (= on the per-node
  dashboards, =~ on the fleet's) and on the cluster, except the recording rules that aggregate the
  cluster label away, whose queries then join memdiag_build_info filtered on it;
- the fleet's per-node panels aggregate by instance and link each node to the node dashboard
  (keeping the datasource, job and cluster) and to its memdiagd status page;
- each per-node dashboard has an annotation of the node's firing memdiag alerts, enabled, and
  links to the node's status page and to the fleet (every node); every dashboard links to the
  others (the memdiag tag).
Standard library only."""
import glob
import json
import os
import re
import unittest

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
GRAFANA = os.path.join(REPO, "deploy", "grafana")
RECORDING = os.path.join(REPO, "deploy", "prometheus", "memdiag-recording.yml")
PER_NODE = ("memdiag.json", "memdiag-node.json", "memdiag-cgroups.json", "memdiag-processes.json",
            "memdiag-canary.json", "memdiag-windows.json")
FLEET = "memdiag-fleet.json"
NODE_DASHBOARD = "memdiag-node.json"  # where the fleet's per-node links go
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
LEVELS = (("none", "green"), ("low", "blue"), ("medium", "yellow"), ("high", "orange"), ("critical", "red"))
VARIABLE_QUERIES = {"job": "label_values(memdiag_build_info, job)",
                    "cluster": 'label_values(memdiag_build_info{job=~"$job"}, cluster)',
                    "instance": 'label_values(memdiag_build_info{job=~"$job",cluster=~"$cluster"}, instance)'}
FIRING_ALERTS = 'ALERTS{alertstate="firing", alertname=~"Memdiag.*", instance="$instance"}'
# A series whose value is a level: the daemon's *_level gauges and the recording rules' *_level* records.
LEVEL_NAME = r'(?:memdiag_\w*_level|memdiag:\w*_level\w*:\w+)'
# Functions and aggregations whose value is one of their input's values (a level stays a level).
KEEPS_VALUE = ("topk", "bottomk", "sort_desc", "sort", "max", "min", "max_over_time", "min_over_time",
               "last_over_time")


def load(name):
    with open(os.path.join(GRAFANA, name)) as f:
        return json.load(f)


def panels(dashboard):
    """Every panel, nested rows' panels included, in dashboard order."""
    def walk(items):
        for panel in items:
            yield panel
            yield from walk(panel.get("panels", []))
    return list(walk(dashboard.get("panels", [])))


def targets(panel):
    return [t for t in panel.get("targets", []) if t.get("expr")]


def without_strings(expr):
    """expr with every "..." string blanked to the same length (positions stay)."""
    return re.sub(r'"(?:[^"\\]|\\.)*"', lambda m: '"' + "\x00" * (len(m.group(0)) - 2) + '"', expr)


def selectors(expr):
    """Every series selector of a PromQL expression: a name with or without {...}, or {...} alone;
    function names, keywords and label names in by/on/without lists are not."""
    text = without_strings(expr)
    text = re.sub(r'\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)',
                  lambda m: " " * len(m.group(0)), text)
    found = []
    for m in re.finditer(r'(?<![\w$:])([a-zA-Z_:][a-zA-Z0-9_:]*)?\s*(\{[^}]*\})'
                         r'|(?<![\w$:])([a-zA-Z_:][a-zA-Z0-9_:]*)(?!\s*[({\w:])', text):
        word = m.group(3)
        if word is not None and (word in ("bool", "and", "or", "unless", "offset", "inf", "nan", "Inf", "NaN", "by",
                                          "without", "on", "ignoring", "group_left", "group_right")
                                 or re.fullmatch(r"\d.*", word)):
            continue
        start, end = m.span()
        found.append(expr[start:end])
    return found


def matchers(selector):
    """{label: (operator, value)} of a selector, its name as __name__ ("=")."""
    m = re.fullmatch(r'\s*([a-zA-Z_:][a-zA-Z0-9_:]*)?\s*(?:\{(.*)\})?\s*', selector, re.S)
    assert m, selector
    out = {"__name__": ("=", m.group(1))} if m.group(1) else {}
    pairs = re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"', m.group(2) or "")
    out.update((label, (op, value)) for label, op, value in pairs)
    return out


def closing(text, start):
    """The index of the parenthesis closing the one at text[start]."""
    depth = 0
    for i in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return i
    return -1


def shows_level(expr):
    """Whether the value an expression returns is a level: a level series, through functions that
    return one of their input's values (topk, max by, max_over_time, ...) and filters (>= 2),
    with `or vector(0)` aside. A count or sum of levels, or a level compared with `bool` to filter
    another series, is not a level."""
    e = without_strings(expr).strip()
    while True:
        e = e.strip()
        m = re.fullmatch(r'(.+?)\s+or\s+vector\s*\(\s*[0-9.]+\s*\)', e, re.S)
        if m:
            e = m.group(1)
            continue
        m = re.fullmatch(r'(.+?)\s*(?:>=|<=|==|!=|>|<)\s*[0-9.]+', e, re.S)
        if m:
            e = m.group(1)
            continue
        m = re.match(r'(%s)\s*(?:(?:by|without)\s*\([^)]*\)\s*)?\(' % "|".join(KEEPS_VALUE), e)
        if m and closing(e, m.end() - 1) == len(e) - 1:
            inner = e[m.end():-1]
            if m.group(1) in ("topk", "bottomk"):
                inner = inner.split(",", 1)[1]
            e = inner
            continue
        m = re.fullmatch(r'\(\s*(.*)\)', e, re.S)
        if m and closing(e, 0) == len(e) - 1:
            e = m.group(1)
            continue
        break
    return bool(re.fullmatch(r'%s\s*(?:\{[^}]*\})?\s*(?:\[[^\]]*\])?' % LEVEL_NAME, e))


def level_mappings(defaults):
    """{value: (text, colour)} of a field's value mappings."""
    out = {}
    for mapping in defaults.get("mappings", []):
        if mapping.get("type") == "value":
            for value, result in mapping.get("options", {}).items():
                out[value] = (result.get("text"), result.get("color"))
    return out


def panel_links(panel):
    """The data links of a panel: its fields' defaults and its overrides'."""
    config = panel.get("fieldConfig", {})
    links = list(config.get("defaults", {}).get("links", []))
    for override in config.get("overrides", []):
        for prop in override.get("properties", []):
            if prop.get("id") == "links":
                links += prop.get("value", [])
    return links


def recording_rules():
    """{record: expression} of the recording rules file (its YAML read line by line: each rule an
    `- expr:` with a double-quoted or `|` block value, then its `record:`)."""
    with open(RECORDING) as f:
        lines = f.read().splitlines()
    rules, expr, block, indent = {}, None, None, 0
    for line in lines:
        if block is not None:
            if line.strip() and len(line) - len(line.lstrip()) > indent:
                block.append(line.strip())
                continue
            expr, block = " ".join(block), None
        m = re.match(r'(\s*)- expr:\s*(.*)$', line)
        if m:
            if m.group(2) == "|":
                block, indent = [], len(m.group(1)) + 2
            else:
                expr = json.loads(m.group(2))
            continue
        m = re.match(r'\s*record:\s*"?([^"]+)"?\s*$', line)
        if m:
            rules[m.group(1)] = expr
            expr = None
    return rules


def records_without_cluster(rules=None):
    """The records whose series have no cluster label: those aggregating by a label list without
    it, and those made from such records."""
    rules = recording_rules() if rules is None else rules
    dropped = {r for r, e in rules.items()
               if any("cluster" not in [l.strip() for l in by.split(",")]
                      for by in re.findall(r'\bby\s*\(([^)]*)\)', e))}
    while True:
        more = {r for r, e in rules.items() if r not in dropped
                and any(re.search(r'(?<![\w:])%s(?![\w:])' % re.escape(d), e) for d in dropped)}
        if not more:
            return dropped
        dropped |= more


class Dashboards(unittest.TestCase):
    def setUp(self):
        self.dashboards = {name: load(name) for name in PER_NODE + (FLEET,)}

    def test_the_seven_dashboards(self):
        self.assertEqual(sorted(os.path.basename(p) for p in glob.glob(os.path.join(GRAFANA, "*.json"))),
                         sorted(self.dashboards), "a dashboard this test does not know: per-node or fleet?")
        uids = [d["uid"] for d in self.dashboards.values()]
        self.assertEqual(len(uids), len(set(uids)), uids)
        for name, dashboard in self.dashboards.items():
            with self.subTest(dashboard=name):
                self.assertIn("memdiag", dashboard["tags"])
                self.assertTrue(dashboard.get("description"))

    def test_every_panel_has_a_description(self):
        for name, dashboard in self.dashboards.items():
            for panel in panels(dashboard):
                if panel["type"] == "row":
                    continue
                with self.subTest(dashboard=name, panel=panel.get("title")):
                    description = panel.get("description", "")
                    self.assertIsInstance(description, str)
                    self.assertGreaterEqual(len(description.strip()), 40, "no description, or a stub")
                    self.assertNotEqual(description.strip(), panel["title"])

    def test_level_panels_name_and_colour_the_levels(self):
        expected = {str(i): level for i, level in enumerate(LEVELS)}
        seen = 0
        for name, dashboard in self.dashboards.items():
            for panel in panels(dashboard):
                if panel["type"] == "row":
                    continue
                defaults = panel.get("fieldConfig", {}).get("defaults", {})
                mapped = level_mappings(defaults)
                with self.subTest(dashboard=name, panel=panel["title"]):
                    if not any(shows_level(t["expr"]) for t in targets(panel)):
                        self.assertNotEqual(mapped, expected, "not a level (a count, bytes), yet mapped as one")
                        continue
                    seen += 1
                    self.assertEqual(mapped, expected)
                    thresholds = defaults.get("thresholds", {})
                    self.assertEqual(thresholds.get("mode"), "absolute")
                    self.assertEqual([(s.get("value"), s.get("color")) for s in thresholds.get("steps", [])],
                                     [(None if i == 0 else i, colour) for i, (_, colour) in enumerate(LEVELS)])
                    if panel["type"] in ("timeseries", "bargauge", "gauge"):
                        self.assertEqual((defaults.get("min"), defaults.get("max")), (0, 4))
                    if panel["type"] in ("stat", "bargauge", "gauge", "table", "state-timeline"):
                        self.assertEqual(defaults.get("color", {}).get("mode"), "thresholds",
                                         "colour by level: the thresholds' colours")
        self.assertGreaterEqual(seen, 10, "level panels: the check found almost none")

    def test_variables(self):
        for name, dashboard in self.dashboards.items():
            with self.subTest(dashboard=name):
                listed = dashboard["templating"]["list"]
                variables = {v["name"]: v for v in listed}
                self.assertEqual([v["name"] for v in listed], ["datasource", "job", "cluster", "instance"],
                                 "each variable after those its query uses")
                self.assertEqual((variables["datasource"]["type"], variables["datasource"]["query"]),
                                 ("datasource", "prometheus"))
                for var in ("job", "cluster", "instance"):
                    self.assertEqual(variables[var]["type"], "query", var)
                    self.assertEqual(variables[var]["datasource"], DATASOURCE, var)
                    self.assertEqual(variables[var]["query"], VARIABLE_QUERIES[var], var)
                # job and cluster: All selects every series (.*, which matches a missing label too)
                for var in ("job", "cluster"):
                    self.assertTrue(variables[var].get("includeAll"), var)
                    self.assertEqual(variables[var].get("allValue"), ".*", var)
                instance = variables["instance"]
                if name == FLEET:  # across nodes by design: All is .*, never a list of every node
                    self.assertTrue(instance.get("includeAll"))
                    self.assertEqual(instance.get("allValue"), ".*")
                else:  # one node: a panel never sums several
                    self.assertIs(instance.get("includeAll"), False)
                    self.assertIs(instance.get("multi"), False)
                    self.assertNotIn("allValue", instance)

    def test_every_recording_rule_keeps_the_cluster_label(self):
        self.assertEqual(records_without_cluster(), set(),
                         "a record that aggregates the cluster away cannot be selected by the cluster variable")
        # The check sees a record that drops it, and one made from that record.
        rules = {"a:x:sum": "sum by (job) (x)", "a:y:max": "max_over_time(a:x:sum[5m])",
                 "a:z:sum": "sum by (cluster, job) (z)"}
        self.assertEqual(records_without_cluster(rules), {"a:x:sum", "a:y:max"})

    def test_every_selector_filters_on_job_cluster_and_instance(self):
        for name, dashboard in self.dashboards.items():
            instance = ("=~", "$instance") if name == FLEET else ("=", "$instance")
            for panel in panels(dashboard):
                for target in targets(panel):
                    found = [(s, matchers(s)) for s in selectors(target["expr"])]
                    with self.subTest(dashboard=name, panel=panel["title"], expr=target["expr"]):
                        self.assertTrue(found)
                        for selector, m in found:
                            self.assertEqual(m.get("job"), ("=~", "$job"), selector)
                            self.assertEqual(m.get("instance"), instance, selector)
                            self.assertEqual(m.get("cluster"), ("=~", "$cluster"), selector)

    def test_fleet_per_node_panels_aggregate_by_instance_and_link_to_the_node(self):
        fleet = self.dashboards[FLEET]
        node_uid = self.dashboards[NODE_DASHBOARD]["uid"]
        linked = 0
        for panel in panels(fleet):
            per_node = [t for t in targets(panel) if "{{instance}}" in t.get("legendFormat", "").replace(" ", "")]
            if not per_node:
                continue
            with self.subTest(panel=panel["title"]):
                for target in per_node:
                    by = re.search(r'\bby\s*\(([^)]*)\)', target["expr"])
                    self.assertTrue(by and "instance" in [l.strip() for l in by.group(1).split(",")],
                                    "a node's series is not aggregated by instance: %s" % target["expr"])
                field = ("${__data.fields.instance}" if any(t.get("format") == "table" for t in per_node)
                         else "${__field.labels.instance}")
                urls = [link.get("url", "") for link in panel_links(panel)]
                to_node = [u for u in urls if u.startswith("/d/%s?" % node_uid)]
                self.assertTrue(to_node, "no link to the node dashboard (uid %s): %s" % (node_uid, urls))
                for part in ("var-instance=" + field, "${datasource:queryparam}", "${job:queryparam}",
                             "${cluster:queryparam}"):
                    self.assertIn(part, to_node[0])
                self.assertIn("http://%s/" % field, urls, "no link to the node's status page")
                linked += 1
        self.assertGreaterEqual(linked, 5, "the fleet's per-node panels: the check found almost none")

    def test_per_node_dashboards_annotate_firing_alerts(self):
        expected = matchers(FIRING_ALERTS)
        for name in PER_NODE:
            with self.subTest(dashboard=name):
                annotations = self.dashboards[name].get("annotations", {}).get("list", [])
                firing = [a for a in annotations if a.get("expr") and matchers(a["expr"]) == expected]
                self.assertEqual(len(firing), 1, "the node's firing alerts: %s" % annotations)
                annotation = firing[0]
                self.assertEqual(annotation.get("datasource"), DATASOURCE)
                self.assertIs(annotation.get("enable"), True)
                self.assertEqual(annotation.get("titleFormat"), "{{alertname}}")
                self.assertRegex(annotation.get("textFormat", ""), r"\{\{\s*\w+\s*\}\}")

    def test_links_between_the_dashboards_and_to_the_status_page(self):
        for name, dashboard in self.dashboards.items():
            with self.subTest(dashboard=name):
                links = dashboard.get("links", [])
                self.assertTrue(any(l.get("type") == "dashboards" and l.get("tags") == ["memdiag"]
                                    and l.get("asDropdown") and l.get("includeVars") and l.get("keepTime")
                                    for l in links), links)
                if name in PER_NODE:
                    self.assertTrue(any(l.get("type") == "link" and l.get("url") == "http://${instance}/"
                                        for l in links), "no link to the node's status page")
                    # back to every node (the drop-down keeps this one node as the fleet's instance)
                    fleet = "/d/%s?" % self.dashboards[FLEET]["uid"]
                    self.assertTrue(any(l.get("type") == "link" and l.get("url", "").startswith(fleet)
                                        and "${job:queryparam}" in l["url"] for l in links), "no link to the fleet")

    def test_the_level_reading(self):
        """shows_level on the shapes the dashboards use, so the check above cannot pass by reading
        nothing as a level."""
        for expr in ('memdiag_stall_level{instance="$instance"}',
                     'topk(20, memdiag_cgroup_stall_level{job=~"$job"})',
                     'sort_desc(max by (instance) (memdiag:node_stall_level:max5m{job=~"$job"}) >= 2)',
                     'topk(10, max by (workload) (memdiag:cgroup_stall_level:workload))',
                     'max_over_time(memdiag_breaking_level[5m])'):
            self.assertTrue(shows_level(expr), expr)
        for expr in ('count(memdiag_cgroup_stall_level{job=~"$job"} >= 2) or vector(0)',
                     'memdiag_cgroup_shortfall_bytes * on (instance, cgroup)'
                     ' (memdiag_cgroup_stall_level > bool 0 == 1)',
                     'sum(memdiag:node_cgroups_stalling:count)', 'memdiag_stall_reason{reason="stall_time"}',
                     'max(memdiag_stall_level) or max(memdiag_overcommit_risk_level) * 2'):
            self.assertFalse(shows_level(expr), expr)


if __name__ == "__main__":
    unittest.main()
