#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Series per node at the defaults on a busy node: 2,000 memory cgroups with a process
each (2,000 processes beside the node's own), memdiagd on the example config, node_exporter on
its defaults, side by side on the same node. Prints samples per scrape and bytes for both, and
memdiagd's families by sample count, largest first.

    python3 tests/bench/series_budget.py [--memdiagd build/bin/memdiagd] [--cgroups 2000] [--config FILE]

Needs root and the v1 memory hierarchy (/sys/fs/cgroup/memory). Cleans up after itself."""
import argparse
import collections
import os
import re
import shutil
import signal
import statistics
import socket
import subprocess
import sys
import time
import urllib.request

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
V1 = "/sys/fs/cgroup/memory"
SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+\S+")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(port, path="/metrics", timeout=10):
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=timeout) as r:
                return r.read().decode()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def families(text):
    counts = collections.Counter()
    for line in text.splitlines():
        if line and not line.startswith("#"):
            m = SAMPLE.match(line)
            if m:
                counts[re.sub(r"_(bucket|sum|count)$", "", m.group(1))] += 1
    return counts


class BusyNode:
    """`count` v1 memory cgroups under one parent, shaped like a Kubernetes node's pods
    (/memdiag-budget/podN/ctrM, two containers a pod), each with a 1 GiB limit and a sleeping
    process."""

    def __init__(self, count):
        self.root = os.path.join(V1, "memdiag-budget-%d" % os.getpid())
        self.procs = []
        os.mkdir(self.root)
        for i in range(count):
            pod = os.path.join(self.root, "pod%04d" % (i // 2))
            if not os.path.isdir(pod):
                os.mkdir(pod)
            cg = os.path.join(pod, "ctr%d" % (i % 2))
            os.mkdir(cg)
            # As the kubelet sets them: every container has a memory limit, so every exported
            # cgroup is also judged as a scope of its own.
            with open(os.path.join(cg, "memory.limit_in_bytes"), "w") as f:
                f.write(str(1 << 30))
            p = subprocess.Popen(["sleep", "3600"])
            with open(os.path.join(cg, "cgroup.procs"), "w") as f:
                f.write(str(p.pid))
            self.procs.append(p)

    def close(self):
        for p in self.procs:
            p.kill()
        for p in self.procs:
            p.wait()
        for dirpath, dirnames, _ in sorted(os.walk(self.root, topdown=False), key=lambda w: -w[0].count("/")):
            for _ in range(50):
                try:
                    os.rmdir(dirpath)
                    break
                except OSError:
                    time.sleep(0.1)


def scrape_bytes(port, gzip):
    """The body's size on the wire of one scrape, plain or asking for gzip."""
    request = urllib.request.Request("http://127.0.0.1:%d/metrics" % port,
                                     headers={"Accept-Encoding": "gzip"} if gzip else {})
    with urllib.request.urlopen(request, timeout=10) as r:
        body = r.read()
        return len(body), r.headers.get("Content-Encoding") == "gzip"


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def scrape_costs(proc, port, rounds=3, seconds=10):
    """Plain and gzip scrapes once a second, in alternating windows of `seconds`: bytes per scrape
    and the process's CPU per window (which holds its sampling too: the difference between the two
    kinds of window is what gzip costs). Medians over `rounds`."""
    result = {}
    for gzip in (False, True) * rounds:
        start = cpu_seconds(proc.pid)
        sizes, encoded = [], False
        for _ in range(seconds):
            size, encoded = scrape_bytes(port, gzip)
            sizes.append(size)
            time.sleep(1)
        result.setdefault(gzip, {"bytes": [], "cpu": [], "encoded": encoded})
        result[gzip]["bytes"].append(statistics.median(sizes))
        result[gzip]["cpu"].append((cpu_seconds(proc.pid) - start) / seconds)
    return {k: {"bytes": statistics.median(v["bytes"]), "cpu_per_second": statistics.median(v["cpu"]),
                "encoded": v["encoded"]} for k, v in result.items()}


def measure(argv, port, settle, costs=False):
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        scrape(port)
        time.sleep(settle)
        text = scrape(port)
        return text, scrape_costs(proc, port) if costs else None
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(10)


def print_costs(name, costs):
    plain, gzipped = costs[False], costs[True]
    print("%s, one scrape a second: plain %.0f kB, gzip %.0f kB (%s, %.2fx the bytes); process CPU "
          "%.1f ms/s with plain scrapes, %.1f ms/s with gzip ones (+%.2f ms per scrape)" %
          (name, plain["bytes"] / 1000, gzipped["bytes"] / 1000,
           "gzip sent" if gzipped["encoded"] else "NOT gzipped", gzipped["bytes"] / plain["bytes"],
           plain["cpu_per_second"] * 1000, gzipped["cpu_per_second"] * 1000,
           (gzipped["cpu_per_second"] - plain["cpu_per_second"]) * 1000))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--memdiagd", default=os.path.join(REPO, "build", "bin", "memdiagd"))
    ap.add_argument("--config", default=os.path.join(REPO, "deploy", "memdiagd.yaml"))
    ap.add_argument("--cgroups", type=int, default=2000)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--gzip", action="store_true",
                    help="also measure bytes and CPU per scrape plain and gzipped, memdiagd and node_exporter alike")
    args = ap.parse_args()
    if os.geteuid() != 0 or not os.path.isdir(V1):
        sys.exit("needs root and %s" % V1)
    node = BusyNode(args.cgroups)
    try:
        processes = len([p for p in os.listdir("/proc") if p.isdigit()])
        all_cgroups = sum(1 for _ in os.walk(V1))
        port = free_port()
        ours, our_costs = measure([args.memdiagd, "--config", args.config, "--web.listen-address",
                                   "127.0.0.1:%d" % port], port, settle=8, costs=args.gzip)
        theirs = None
        if shutil.which("prometheus-node-exporter"):
            port = free_port()
            theirs, their_costs = measure(["prometheus-node-exporter", "--web.listen-address=127.0.0.1:%d" % port],
                                          port, settle=1, costs=args.gzip)
    finally:
        node.close()
    counts = families(ours)
    print("busy node: %d memory cgroups made (%d in all), %d processes" %
          (args.cgroups, all_cgroups, processes))
    print("memdiagd (%s): %d samples per scrape, %.0f kB" %
          (os.path.relpath(args.config, REPO), sum(counts.values()), len(ours.encode()) / 1000))
    if theirs is not None:
        print("node_exporter 1.5 (default collectors): %d samples per scrape, %.0f kB" %
              (sum(families(theirs).values()), len(theirs.encode()) / 1000))
    if args.gzip:
        print_costs("memdiagd", our_costs)
        if theirs is not None:
            print_costs("node_exporter", their_costs)
    print("\nmemdiagd families by samples:")
    for name, n in counts.most_common(args.top):
        print("  %6d  %s" % (n, name))


if __name__ == "__main__":
    main()
