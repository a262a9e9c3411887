#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""CPU cost of memdiagd's page-fault canary at its defaults (target: under 1 % of a core).

Starts memdiagd with only the canary source on (its defaults unless --interval/--working-set
say otherwise, but never backing off on PSI: this measures a cycle's cost), bound to 127.0.0.1,
and runs it for --seconds. Side by side, in this script's
own thread and at the same cadence, a bare cycle does what any canary has to do at minimum:
mmap the working set, write one byte per 4 KiB page (every write a page fault), munmap. At
the end it reports

  canary share     CPU time of the thread named "memdiag-canary" (schedstat, ns; the main
                   thread of the daemon's canary child process) over the wall time: the
                   fraction of one core (target < 1 %)
  per cycle        that CPU time divided by memdiag_canary_cycles_total, and the bare cycle's
                   median CPU time (thread_time_ns); their ratio is what the canary costs on
                   top of the page faults themselves (its timing of every fault, the size
                   classes, returning the memory)
  whole daemon     utime+stime of the process (every thread) and its canary child over the
                   wall time

Needs a build (build/bin/memdiagd). Standard library only; root is not needed.
"""

import argparse
import http.client
import mmap
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from scrape_vs_node_exporter import free_port  # this directory is on sys.path

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE = 4096
TARGET_SHARE = 0.01


def scrape(port):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", "/metrics")
        return conn.getresponse().read().decode()
    finally:
        conn.close()


def metric(text, name):
    """The value of an unlabelled or single-series metric; None when absent."""
    m = re.search(r"^" + re.escape(name) + r"(?:\{[^}]*\})? ([0-9.eE+-]+)$", text, re.M)
    return float(m.group(1)) if m else None


def children(pid):
    found = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                found += [int(c) for c in f.read().split()]
        except OSError:
            continue
    return found


def canary_thread_ns(pid):
    """CPU ns of the thread named memdiag-canary (the main thread of the daemon's canary child
    process, memdiagd --canary-child), or None while it does not exist."""
    for process in [pid] + children(pid):
        try:
            tids = os.listdir(f"/proc/{process}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{process}/task/{tid}/comm") as f:
                    if f.read().strip() != "memdiag-canary":
                        continue
                with open(f"/proc/{process}/task/{tid}/schedstat") as f:
                    return int(f.read().split()[0])
            except OSError:
                continue
    return None


def process_cpu_s(pid):
    """utime+stime of the daemon and of its (canary) children, which run the cycles."""
    total = 0
    for process in [pid] + children(pid):
        with open(f"/proc/{process}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / CLK_TCK


def bare_cycle_ns(working_set):
    """mmap, one write per page (a fault each), munmap; this thread's CPU time."""
    t0 = time.thread_time_ns()
    m = mmap.mmap(-1, working_set, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    pages = working_set // PAGE
    m[::PAGE] = b"\x01" * pages  # a strided copy in C: the first byte of every page
    m.close()
    return time.thread_time_ns() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--daemon", default=os.path.join(REPO_ROOT, "build", "bin", "memdiagd"))
    ap.add_argument("--seconds", type=float, default=120, help="how long to run (default 120)")
    ap.add_argument("--interval", default=None, help="canary interval, e.g. 10s (default: the daemon's)")
    ap.add_argument("--working-set", type=int, default=None, help="bytes (default: the daemon's)")
    ap.add_argument("--json", action="store_true", help="one JSON object instead of the table")
    args = ap.parse_args()

    # backoff_psi_full 100: this measures what a cycle costs, so no cycle may be skipped because
    # an earlier test or job left node memory PSI high.
    canary = {"enabled": "true", "backoff_psi_full": "100"}
    if args.interval:
        canary["interval"] = args.interval
    if args.working_set:
        canary["working_set_bytes"] = str(args.working_set)
    config = "sources:\n" + "".join(
        f"  {s}: {{enabled: false}}\n"
        for s in ("meminfo", "vmstat", "pressure", "vm_sysctl", "cgroup", "reclaim_stall", "processes"))
    config += "  canary: {" + ", ".join(f"{k}: {v}" for k, v in canary.items()) + "}\n"

    port = free_port()
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(config)
        config_path = f.name
    proc = subprocess.Popen([args.daemon, "--config", config_path, "--web.listen-address", f"127.0.0.1:{port}",
                             "--log.level", "warn"], stdout=subprocess.DEVNULL)
    try:
        text = None
        for _ in range(100):
            try:
                text = scrape(port)
                break
            except OSError:
                time.sleep(0.05)
        if text is None or proc.poll() is not None:
            sys.exit("memdiagd did not come up")
        t_start = time.monotonic()
        thread0 = None
        while thread0 is None and time.monotonic() - t_start < 5:
            thread0 = canary_thread_ns(proc.pid)
            time.sleep(0.01)
        if thread0 is None:
            sys.exit("no thread named memdiag-canary")
        cycles0 = metric(scrape(port), "memdiag_canary_cycles_total") or 0
        cpu0 = process_cpu_s(proc.pid)
        wall0 = time.monotonic()

        working_set = args.working_set or 16 << 20  # the daemon's default working_set_bytes
        m = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m)?", args.interval or "10s")
        if not m:
            sys.exit("--interval: a duration like 500ms, 10s or 1m")
        interval_s = float(m.group(1)) * {"ms": 0.001, "s": 1, "m": 60, None: 1}[m.group(2)]
        bare = []
        next_bare = wall0 + interval_s / 2  # half a period apart from the canary's cycles
        while time.monotonic() - wall0 < args.seconds:
            now = time.monotonic()
            if now >= next_bare:
                bare.append(bare_cycle_ns(working_set))
                next_bare += interval_s
            time.sleep(max(0.0, min(next_bare, wall0 + args.seconds) - time.monotonic()))
        wall = time.monotonic() - wall0
        thread_ns = canary_thread_ns(proc.pid) - thread0
        cpu = process_cpu_s(proc.pid) - cpu0
        text = scrape(port)
        cycles = (metric(text, "memdiag_canary_cycles_total") or 0) - cycles0
        faults = metric(text, "memdiag_canary_page_fault_seconds_count")
        fault_sum = metric(text, "memdiag_canary_page_fault_seconds_sum")
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        os.unlink(config_path)

    if cycles == 0 or not bare:
        sys.exit(f"no canary cycles ran in {wall:.0f} s: nothing to report")
    share = thread_ns / 1e9 / wall
    per_cycle_ms = thread_ns / 1e6 / cycles
    bare_ms = statistics.median(bare) / 1e6
    result = {
        "seconds": round(wall, 1), "working_set_bytes": working_set, "interval_s": interval_s,
        "cycles": int(cycles), "canary_share_of_core": share, "canary_ms_per_cycle": per_cycle_ms,
        "bare_ms_per_cycle_median": bare_ms, "ratio_canary_to_bare": per_cycle_ms / bare_ms,
        "daemon_share_of_core": cpu / wall,
        "mean_page_fault_us": fault_sum / faults * 1e6 if faults else None,
        "target_share": TARGET_SHARE, "met": share < TARGET_SHARE,
    }
    if args.json:
        import json
        print(json.dumps(result))
        return
    print(f"memdiagd canary, {working_set >> 20} MiB every {interval_s:g} s, {wall:.0f} s, {int(cycles)} cycles")
    print(f"  canary thread          {share * 100:.3f} % of one core   (target < {TARGET_SHARE * 100:g} %: "
          f"{'met' if result['met'] else 'MISSED'})")
    print(f"  per cycle              canary {per_cycle_ms:.2f} ms CPU, bare mmap+touch+munmap {bare_ms:.2f} ms "
          f"(median of {len(bare)}): ratio {result['ratio_canary_to_bare']:.2f}")
    print(f"  whole daemon           {cpu / wall * 100:.3f} % of one core (10 ms ticks)")
    if result["mean_page_fault_us"] is not None:
        print(f"  mean page fault        {result['mean_page_fault_us']:.2f} us")


if __name__ == "__main__":
    main()
