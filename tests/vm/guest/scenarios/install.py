# SPDX-License-Identifier: Apache-2.0
"""The README's set-up on a systemd, cgroup v2 host: the .deb installed, `systemctl enable --now
memdiagd` the whole set-up; every source up (or saying why it cannot be), nothing degraded, every
eBPF stall kind attached,
`systemctl status` showing the verdict line, the shipped config passing --check-config, and
Debian's Prometheus scraping it."""
import json
import os
import re
import time
import urllib.parse
import urllib.request

from lab import LISTEN

DEB = "/mnt/vm/memdiag.deb"


def run(lab):
    lab.sh("dpkg", "-i", DEB, timeout=120)
    lab.sh("systemctl", "enable", "--now", "memdiagd", timeout=120)

    def healthy():
        try:
            return lab.get("/healthz")[0] == 200, None
        except OSError as e:
            return False, str(e)
    lab.eventually("/healthz answers 200", healthy, 60)
    time.sleep(5)  # a few samples, so every source has had its first try
    report = lab.diagnosis()
    down = [(s["source"], s["error"]) for s in report.get("sources_down", [])]
    lab.check("every source is up", not down, down)
    journal = lab.sh("journalctl", "-u", "memdiagd", "--no-pager", "-o", "cat").stdout
    degraded = [line for line in journal.splitlines() if "degraded" in line]
    lab.check("no source says it is degraded", not degraded, degraded[:5])
    status = lab.sh("systemctl", "status", "memdiagd", "--no-pager", check=False).stdout
    # sd_notify STATUS=: the three verdicts and the sources, every one of them up.
    verdict = re.compile(r'Status: "stall \w+; overcommit \w+; breaking \w+; (\d+)/\1 sources up"')
    lab.check("systemctl status shows the verdict line, every source up", verdict.search(status),
              [line.strip() for line in status.splitlines() if "Status:" in line])
    check = lab.sh("memdiagd", "--check-config", "--config", "/etc/memdiag/memdiagd.yaml", check=False)
    lab.check("the shipped config passes --check-config", check.returncode == 0, check.stderr.strip()[-300:])
    samples = lab.metrics()
    # eBPF: every stall kind and the OOM victim program attached on this kernel (or the missing
    # ones said: the source would then be degraded, checked above), and in which mode.
    kinds = {labels: v for (name, labels), v in samples.items() if name == "memdiag_reclaim_stall_kind_attached"}
    attached = sorted(labels for labels, v in kinds.items() if v == 1 and 'mode="none"' not in labels)
    lab.check("eBPF: all five stall kinds attached", len(attached) == 5, attached)
    victims = {labels: v for (name, labels), v in samples.items() if name == "memdiag_oom_victims_attached"}
    lab.check("eBPF: the OOM victim program attached", any(v == 1 for v in victims.values()), victims)
    # The unit's own cgroup under system.slice is there, with its usage, read from cgroup v2.
    usage = {labels: v for (name, labels), v in samples.items() if name == "memdiag_cgroup_memory_usage_bytes"}
    lab.check("the cgroup source reads memdiagd.service's cgroup",
              any("memdiagd.service" in labels and v > 0 for labels, v in usage.items()), sorted(usage)[:5])

    # A real Prometheus (Debian's package) scrapes the installed daemon: the target is up and the
    # daemon's series are in its database, as a user's server would see them.
    with open("/etc/prometheus/prometheus.yml", "w") as f:
        f.write("global:\n  scrape_interval: 2s\n  scrape_timeout: 2s\n"
                "scrape_configs:\n  - job_name: memdiag\n    static_configs:\n"
                "      - targets: ['%s']\n" % LISTEN)
    lab.sh("systemctl", "restart", "prometheus", timeout=120)

    def query(expr):
        url = "http://127.0.0.1:9090/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                return json.loads(r.read().decode())["data"]["result"]
        except (OSError, ValueError, KeyError) as e:
            return str(e)

    def scraped():
        up = query('up{job="memdiag"}')
        return isinstance(up, list) and len(up) == 1 and up[0]["value"][1] == "1", up
    lab.eventually("Prometheus scrapes the daemon: up{job=\"memdiag\"} is 1", scraped, 90)
    levels = query('memdiag_stall_level{job="memdiag"}')
    lab.check("Prometheus holds the daemon's series: memdiag_stall_level with a value 0..4",
              isinstance(levels, list) and levels and all(0 <= float(s["value"][1]) <= 4 for s in levels),
              levels if not isinstance(levels, list) else [(s["metric"], s["value"][1]) for s in levels][:5])
    lab.sh("systemctl", "stop", "prometheus", timeout=60)

    def diagnose_origin(*flags):
        report = lab.sh("memdiagd", "diagnose", "--format", "json", "--timeout", "10", *flags, check=False, timeout=60)
        return json.loads(report.stdout).get("origin") if report.returncode == 0 else report.stderr.strip()[-200:]

    # The root-only socket the shipped config names, in the directory the unit makes.
    sock = "/run/memdiag/memdiagd.sock"
    modes = {p: oct(os.stat(p).st_mode & 0o7777) if os.path.exists(p) else None for p in ("/run/memdiag", sock)}
    lab.check("the unit's RuntimeDirectory is 0700 and the daemon's socket in it 0600",
              modes == {"/run/memdiag": "0o700", sock: "0o600"}, modes)
    origin = diagnose_origin("--socket", sock)
    lab.check("memdiagd diagnose --socket: the daemon answers over its Unix socket", origin == "daemon", origin)

    # `memdiagd diagnose` with no flag finds the daemon through the installed config: with the
    # socket off and the daemon moved to another port, it still answers (origin "daemon", not a
    # local sample).
    config = "/etc/memdiag/memdiagd.yaml"
    with open(config) as f:
        shipped = f.read()
    try:
        moved = shipped.replace('listen_address: "0.0.0.0:9842"', 'listen_address: "127.0.0.1:9843"')
        moved = moved.replace("unix_socket: /run/memdiag/memdiagd.sock", 'unix_socket: ""')
        with open(config, "w") as f:
            f.write(moved)
        lab.sh("systemctl", "restart", "memdiagd", timeout=120)
        lab.check("with unix_socket off, the socket is gone", not os.path.exists(sock), sock)
        origin = diagnose_origin()
        lab.check("memdiagd diagnose reads the installed config: it asks the daemon at its configured port",
                  origin == "daemon", origin)
    finally:
        with open(config, "w") as f:
            f.write(shipped)
        lab.sh("systemctl", "restart", "memdiagd", timeout=120)
    lab.eventually("/healthz answers 200 again on the shipped config", healthy, 60)
