#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Scrape cost of memdiagd against prometheus-node-exporter, side by side.

Starts both exporters on free 127.0.0.1 ports (node_exporter with only the meminfo, vmstat and
pressure collectors), waits until both answer, warms up, then scrapes /metrics N times from
each over one kept-alive HTTP/1.1 connection per exporter, alternating between them in blocks
so machine noise hits both alike. Per exporter it reports:

  CPU per scrape   utime+stime from /proc/PID/stat over the scrape phase, divided by N
                   (every thread counts: memdiagd's sampler thread, node_exporter's GC)
                   and the same from the per-thread nanosecond run times (schedstat),
                   because /proc/PID/stat counts in 10 ms ticks
  latency          p50/p99 of one request+response as the client sees it
  RSS              VmRSS when ready and after the scrapes
  size             samples and bytes per scrape

then the ratios memdiagd/node_exporter and whether the targets hold (CPU per scrape at
most 1/10 of node_exporter's, RSS at most 1/2). Each round starts fresh processes; the figures
printed are the medians over the rounds. Standard library only.
"""

import argparse
import ctypes
import http.client
import json
import math
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CLK_TCK = os.sysconf("SC_CLK_TCK")
# Identical for both targets; no gzip. http.client adds Host and "Accept-Encoding: identity".
REQUEST_HEADERS = {"Accept": "text/plain;version=0.0.4", "User-Agent": "memdiag-bench"}
CPU_RATIO_TARGET = 0.10
RSS_RATIO_TARGET = 0.50


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def die_with_parent():
    """In the child before exec: get SIGTERM if this script dies without cleaning up."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class Target:
    """One exporter process, its port and its kept-alive connection."""

    def __init__(self, name, argv_for_port, ready_path, ready_text):
        self.name = name
        self.argv_for_port = argv_for_port
        self.ready_path = ready_path
        self.ready_text = ready_text
        self.proc = None
        self.log = None
        self.port = None
        self.conn = None
        self.sock = None
        self.connections = 0

    def start(self):
        self.sock = None
        self.connections = 0
        self.port = free_port()
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(self.argv_for_port(self.port), stdin=subprocess.DEVNULL,
                                     stdout=self.log, stderr=subprocess.STDOUT,
                                     preexec_fn=die_with_parent)

    def log_tail(self):
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-2000:]

    def wait_ready(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                conn.request("GET", self.ready_path, headers=REQUEST_HEADERS)
                resp = conn.getresponse()
                body = resp.read().decode(errors="replace")
                conn.close()
                if resp.status == 200 and self.ready_text in body:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"{self.name} did not answer on 127.0.0.1:{self.port} within {timeout}s:\n"
                           f"{self.log_tail()}")

    def scrape(self):
        """One GET /metrics on the kept-alive connection; returns the body."""
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        self.conn.request("GET", "/metrics", headers=REQUEST_HEADERS)
        resp = self.conn.getresponse()
        body = resp.read()
        if resp.status != 200:
            raise RuntimeError(f"{self.name}: /metrics answered {resp.status}")
        if self.conn.sock is not None and self.conn.sock is not self.sock:
            self.sock = self.conn.sock
            self.connections += 1
        return body

    def cpu_ticks(self):
        # Fields after the ")" of comm: state is field 3, utime 14, stime 15.
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])

    def run_ns(self):
        """Sum of every live thread's run time in ns (first field of schedstat)."""
        total = 0
        task_dir = f"/proc/{self.proc.pid}/task"
        for tid in os.listdir(task_dir):
            try:
                with open(f"{task_dir}/{tid}/schedstat") as f:
                    total += int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                pass  # the thread exited meanwhile
        return total

    def threads(self):
        return len(os.listdir(f"/proc/{self.proc.pid}/task"))

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise RuntimeError(f"{self.name}: no VmRSS")

    def stop(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        if self.log is not None:
            self.log.close()
            self.log = None


def count_samples(body):
    return sum(1 for line in body.split(b"\n") if line and not line.startswith(b"#"))


def percentile(sorted_values, p):
    index = max(0, math.ceil(p / 100 * len(sorted_values)) - 1)
    return sorted_values[index]


def run_round(targets, args):
    for t in targets:
        t.start()
    for t in targets:
        t.wait_ready(args.ready_timeout)
    rss_ready = {t.name: t.rss_kib() for t in targets}
    for _ in range(args.warmup):
        for t in targets:
            t.scrape()

    latencies = {t.name: [] for t in targets}
    last_body = {}
    ticks_before = {t.name: t.cpu_ticks() for t in targets}
    ns_before = {t.name: t.run_ns() for t in targets}
    wall_start = time.monotonic()
    done = 0
    block_index = 0
    while done < args.scrapes:
        n = min(args.block, args.scrapes - done)
        order = targets if block_index % 2 == 0 else list(reversed(targets))  # who goes first alternates too
        for t in order:
            lat = latencies[t.name]
            for _ in range(n):
                begin = time.perf_counter_ns()
                body = t.scrape()
                lat.append(time.perf_counter_ns() - begin)
            last_body[t.name] = body
        done += n
        block_index += 1
    wall_s = time.monotonic() - wall_start
    ticks_after = {t.name: t.cpu_ticks() for t in targets}
    ns_after = {t.name: t.run_ns() for t in targets}

    result = {}
    for t in targets:
        lat = sorted(latencies[t.name])
        result[t.name] = {
            "cpu_us_per_scrape": (ticks_after[t.name] - ticks_before[t.name]) / CLK_TCK * 1e6 / args.scrapes,
            "cpu_us_per_scrape_schedstat": (ns_after[t.name] - ns_before[t.name]) / 1e3 / args.scrapes,
            "p50_us": percentile(lat, 50) / 1e3,
            "p99_us": percentile(lat, 99) / 1e3,
            "rss_ready_mib": rss_ready[t.name] / 1024,
            "rss_after_mib": t.rss_kib() / 1024,
            "samples_per_scrape": count_samples(last_body[t.name]),
            "bytes_per_scrape": len(last_body[t.name]),
            "threads": t.threads(),
            "connections": t.connections,
        }
    result["phase_wall_s"] = wall_s
    return result


FIGURES = [  # key, label, format
    ("cpu_us_per_scrape", "CPU per scrape, us (/proc/PID/stat)", "{:.1f}"),
    ("cpu_us_per_scrape_schedstat", "CPU per scrape, us (schedstat, ns)", "{:.1f}"),
    ("p50_us", "latency p50, us", "{:.0f}"),
    ("p99_us", "latency p99, us", "{:.0f}"),
    ("rss_ready_mib", "RSS when ready, MiB", "{:.1f}"),
    ("rss_after_mib", "RSS after scrapes, MiB", "{:.1f}"),
    ("samples_per_scrape", "samples per scrape", "{:.0f}"),
    ("bytes_per_scrape", "bytes per scrape", "{:.0f}"),
    ("threads", "threads", "{:.0f}"),
    ("connections", "TCP connections used", "{:.0f}"),
]


def summarize(rounds, names):
    med = {n: {key: statistics.median(r[n][key] for r in rounds) for key, _, _ in FIGURES} for n in names}
    mine, theirs = med[names[0]], med[names[1]]
    cpu_ratio = mine["cpu_us_per_scrape"] / theirs["cpu_us_per_scrape"] if theirs["cpu_us_per_scrape"] else float("nan")
    cpu_ratio_ns = mine["cpu_us_per_scrape_schedstat"] / theirs["cpu_us_per_scrape_schedstat"]
    rss_ratio = mine["rss_after_mib"] / theirs["rss_after_mib"]
    return {
        "median": med,
        "ratios": {"cpu_per_scrape": cpu_ratio, "cpu_per_scrape_schedstat": cpu_ratio_ns, "rss_after": rss_ratio},
        "targets": {
            "cpu_per_scrape_at_most_1_10": cpu_ratio <= CPU_RATIO_TARGET,
            "rss_at_most_1_2": rss_ratio <= RSS_RATIO_TARGET,
        },
    }


def print_table(summary, names, args, rounds):
    med = summary["median"]
    print(f"memdiagd vs node_exporter: {args.scrapes} scrapes each per round, blocks of {args.block}, "
          f"medians of {len(rounds)} round(s); CPU ticks are {1000 // CLK_TCK} ms")
    print(f"{'':38} {names[0]:>12} {names[1]:>14}")
    for key, label, fmt in FIGURES:
        print(f"{label:38} {fmt.format(med[names[0]][key]):>12} {fmt.format(med[names[1]][key]):>14}")
    r, ok = summary["ratios"], summary["targets"]
    verdict = {True: "met", False: "MISSED"}
    print()
    print(f"CPU per scrape ratio memdiagd/node_exporter  {r['cpu_per_scrape']:.3f} "
          f"(schedstat {r['cpu_per_scrape_schedstat']:.3f})  target <= {CPU_RATIO_TARGET:.2f}: "
          f"{verdict[ok['cpu_per_scrape_at_most_1_10']]}")
    print(f"RSS ratio memdiagd/node_exporter            {r['rss_after']:.3f}  target <= {RSS_RATIO_TARGET:.2f}: "
          f"{verdict[ok['rss_at_most_1_2']]}")
    per_round = ", ".join(f"{rd[names[0]]['cpu_us_per_scrape']:.1f}/{rd[names[1]]['cpu_us_per_scrape']:.1f}"
                          for rd in rounds)
    print(f"per round CPU us/scrape (memdiagd/node_exporter): {per_round}")


def raise_interrupt(_signum, _frame):
    raise KeyboardInterrupt


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--memdiagd", default=os.path.join(REPO_ROOT, "build", "bin", "memdiagd"),
                   help="memdiagd binary (default: build/bin/memdiagd in the repository)")
    p.add_argument("--config", help="config file passed to memdiagd")
    p.add_argument("--node-exporter", default="/usr/bin/prometheus-node-exporter", help="node_exporter binary")
    p.add_argument("--scrapes", type=int, default=1000, help="scrapes per exporter per round (default 1000)")
    p.add_argument("--rounds", type=int, default=3, help="rounds, each with fresh processes (default 3)")
    p.add_argument("--block", type=int, default=50, help="consecutive scrapes of one exporter (default 50)")
    p.add_argument("--warmup", type=int, default=50, help="unmeasured scrapes each before measuring (default 50)")
    p.add_argument("--ready-timeout", type=float, default=15, help="seconds to wait for both to answer")
    p.add_argument("--json", action="store_true", help="print JSON (every round and the medians) instead of a table")
    args = p.parse_args()
    if args.scrapes < 1 or args.rounds < 1 or args.block < 1 or args.warmup < 0:
        p.error("--scrapes, --rounds and --block must be positive, --warmup not negative")
    for path in (args.memdiagd, args.node_exporter):
        if not os.access(path, os.X_OK):
            p.error(f"not an executable: {path}")
    return args


def side_by_side_targets(memdiagd, config, node_exporter):
    """memdiagd (with `config`, or its defaults) and node_exporter with the collectors covering
    the same node files (meminfo, vmstat, pressure), each on the port it is given."""
    memdiagd_argv = [memdiagd] + (["--config", config] if config else [])
    return [
        Target("memdiagd", lambda port: memdiagd_argv + ["--web.listen-address", f"127.0.0.1:{port}"],
               "/metrics", "memdiag_meminfo_mem_total_bytes"),
        Target("node_exporter", lambda port: [node_exporter, f"--web.listen-address=127.0.0.1:{port}",
                                              "--collector.disable-defaults", "--collector.meminfo",
                                              "--collector.vmstat", "--collector.pressure"],
               "/metrics", "node_memory_MemTotal_bytes"),
    ]


def main():
    args = parse_args()
    # Ctrl-C, and SIGTERM (e.g. ctest timing out), unwind so the finally below stops both
    # exporters, even when started with SIGINT ignored (as background jobs are).
    signal.signal(signal.SIGINT, raise_interrupt)
    signal.signal(signal.SIGTERM, raise_interrupt)

    targets = side_by_side_targets(args.memdiagd, args.config, args.node_exporter)
    names = [t.name for t in targets]
    rounds = []
    try:
        for i in range(args.rounds):
            print(f"round {i + 1}/{args.rounds} ...", file=sys.stderr, flush=True)
            try:
                rounds.append(run_round(targets, args))
            finally:
                for t in targets:
                    t.stop()
    except KeyboardInterrupt:
        print("interrupted; both exporters stopped", file=sys.stderr)
        return 130
    except RuntimeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1

    summary = summarize(rounds, names)
    if args.json:
        json.dump({"scrapes": args.scrapes, "block": args.block, "rounds": rounds, **summary}, sys.stdout, indent=2)
        print()
    else:
        print_table(summary, names, args, rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
