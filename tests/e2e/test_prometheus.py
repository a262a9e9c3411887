"""A real Prometheus server (Debian's prometheus 2.x) scrapes the real memdiagd on loopback:
the exposition is accepted, counters are usable in rate(), and values match /proc. The shipped
alert rules are loaded into it and evaluate without errors on the real data, and every query of
the shipped Grafana dashboard runs."""
import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest
import urllib.parse
import urllib.request

from harness import REPO, Daemon, die_with_parent, free_port

RULES = os.path.join(REPO, "deploy", "prometheus", "memdiag-alerts.yml")
DASHBOARD = os.path.join(REPO, "deploy", "grafana", "memdiag.json")


def api(port, path, **params):
    url = "http://127.0.0.1:%d/api/v1/%s?%s" % (port, path, urllib.parse.urlencode(params))
    with urllib.request.urlopen(url, timeout=5) as resp:
        body = json.load(resp)
    assert body["status"] == "success", body
    return body["data"]


def query(port, expr):
    return api(port, "query", query=expr)["result"]


class PrometheusScrapesMemdiagd(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="memdiag-prom-")
        self.prom = None

    def tearDown(self):
        if self.prom and self.prom.poll() is None:
            self.prom.terminate()
            try:
                self.prom.wait(10)
            except subprocess.TimeoutExpired:
                self.prom.kill()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_scraped_and_queryable(self):
        with Daemon() as d:
            d.wait_ready()
            prom_port = free_port()
            config = os.path.join(self.tmp, "prometheus.yml")
            with open(config, "w") as f:
                f.write("global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
                        "rule_files: ['%s']\n"
                        "scrape_configs:\n" % RULES +
                        "  - job_name: memdiag\n"
                        "    static_configs: [{targets: ['%s']}]\n" % d.address)
            self.prom = subprocess.Popen(
                ["prometheus", "--config.file", config, "--storage.tsdb.path", os.path.join(self.tmp, "data"),
                 "--web.listen-address", "127.0.0.1:%d" % prom_port],
                stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.tmp, "prometheus.log"), "w"),
                preexec_fn=die_with_parent)

            # Two scrapes a second apart may both see the same 1 s sample (rate 0): wait until
            # Prometheus holds two different samples of a counter that always moves.
            deadline = time.monotonic() + 60
            rate = []
            while time.monotonic() < deadline:
                try:
                    rate = query(prom_port, 'rate(memdiag_vmstat_pgfault_total{job="memdiag"}[10s])')
                    if rate and float(rate[0]["value"][1]) > 0:
                        break
                except OSError:
                    pass
                time.sleep(0.5)
            self.assertTrue(rate, "Prometheus never had two scrapes of memdiagd")
            self.assertGreater(float(rate[0]["value"][1]), 0, "pgfault never moved in Prometheus' view")

            up = query(prom_port, 'up{job="memdiag"}')
            self.assertEqual(up[0]["value"][1], "1")
            with open("/proc/meminfo") as f:
                mem_total = int(f.readline().split()[1]) * 1024
            total = query(prom_port, "memdiag_meminfo_mem_total_bytes")
            self.assertEqual(float(total[0]["value"][1]), mem_total)
            has_psi = os.path.exists("/proc/pressure/memory")
            psi = query(prom_port, 'memdiag_pressure_ratio{resource="memory",kind="some",window="10s"}')
            self.assertEqual(len(psi), 1 if has_psi else 0)
            up_here = sum(1 for (name, _), v in d.samples().items() if name == "memdiag_source_up" and v == 1)
            self.assertEqual(len(query(prom_port, 'memdiag_source_up == 1')), up_here)
            # Prometheus's own view of the scrape: no samples rejected for bad names or types.
            samples = query(prom_port, 'scrape_samples_scraped{job="memdiag"}')
            self.assertGreater(float(samples[0]["value"][1]), 250)

            # The shipped alert rules, evaluated by this Prometheus on the real data.
            def rules():
                groups = api(prom_port, "rules")["groups"]
                found = [r for g in groups for r in g["rules"]]
                return found if found and all(r.get("lastEvaluation", "").startswith("2") and
                                              not r["lastEvaluation"].startswith("0001") for r in found) else None
            deadline = time.monotonic() + 60
            evaluated = None
            while time.monotonic() < deadline and not evaluated:
                evaluated = rules()
                time.sleep(0.5)
            self.assertIsNotNone(evaluated, "alert rules never evaluated")
            with open(RULES) as f:
                self.assertEqual(len(evaluated), sum(1 for line in f if line.strip().startswith("- alert:")))
            for r in evaluated:
                self.assertEqual(r["health"], "ok", r)

            # Every query of the shipped dashboard runs (the instance variable as "all").
            with open(DASHBOARD) as f:
                dashboard = json.load(f)
            exprs = [t["expr"] for panel in dashboard["panels"] for t in panel["targets"]]
            self.assertGreater(len(exprs), 10)
            for expr in exprs:
                query(prom_port, expr.replace("$instance", ".*"))
            # Queries that must have data on any node: PSI (when the kernel has it), overcommit.
            self.assertTrue(query(prom_port, dashboard["panels"][4]["targets"][0]["expr"].replace("$instance", ".*")))


if __name__ == "__main__":
    unittest.main()
