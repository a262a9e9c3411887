"""A real Prometheus server (Debian's prometheus 2.x) scrapes the real memdiagd on loopback:
the exposition is accepted, counters are usable in rate(), and values match /proc."""
import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest
import urllib.parse
import urllib.request

from harness import Daemon, die_with_parent, free_port


def query(port, expr):
    url = "http://127.0.0.1:%d/api/v1/query?%s" % (port, urllib.parse.urlencode({"query": expr}))
    with urllib.request.urlopen(url, timeout=5) as resp:
        body = json.load(resp)
    assert body["status"] == "success", body
    return body["data"]["result"]


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
                        "scrape_configs:\n"
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


if __name__ == "__main__":
    unittest.main()
