#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Peak and steady resident memory of memdiagd against prometheus-node-exporter, side by side.

Starts both on free 127.0.0.1 ports (node_exporter with the meminfo, vmstat and pressure
collectors, as scrape_vs_node_exporter.py does), waits until both answer, scrapes each N times
(alternating, one kept-alive connection each), waits --settle seconds so memdiagd's eBPF
sources have loaded and its sampler has run, then reads VmHWM (the peak) and VmRSS of both
from /proc/PID/status and prints them with the ratios memdiagd/node_exporter.

Pass --config to choose what memdiagd runs; the sources that were up are printed with the
figures, and so are memdiagd's children (the canary's, which holds the canary's working set):
their memory is not in memdiagd's VmHWM. The eBPF objects are loaded by a short-lived child
(its peak is reported by tests/unit/bpf, ReclaimStallLive.LoadingParsesTheKernelsBtfInTheChildNotHere).
Standard library only.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scrape_vs_node_exporter import REPO_ROOT, side_by_side_targets  # noqa: E402


def status_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} for {pid}")


def rollup_kib(pid):
    """Pss, Private (clean + dirty) and the file-backed share of Rss, from smaps_rollup: what the
    process costs the node beyond the shared library pages RSS counts in full."""
    fields = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 2 and parts[0].endswith(":") and parts[1].isdigit():
                fields[parts[0][:-1]] = int(parts[1])
    return {"Pss": fields.get("Pss", 0),
            "Private": fields.get("Private_Clean", 0) + fields.get("Private_Dirty", 0),
            "Rss file": fields.get("Rss", 0) - fields.get("Anonymous", 0)}


def children_of(pid):
    """(pid, argv, VmHWM KiB, VmRSS KiB) of the live children of pid."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            if ppid != pid:
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = " ".join(a.decode(errors="replace") for a in f.read().split(b"\0") if a)
            out.append((int(entry), argv[:60], status_kib(entry, "VmHWM"), status_kib(entry, "VmRSS")))
        except (OSError, IndexError, ValueError, RuntimeError):
            continue  # gone meanwhile
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--memdiagd", default=os.path.join(REPO_ROOT, "build", "bin", "memdiagd"))
    p.add_argument("--config", help="config file passed to memdiagd (default: built-in defaults)")
    p.add_argument("--node-exporter", default="/usr/bin/prometheus-node-exporter")
    p.add_argument("--scrapes", type=int, default=100, help="scrapes of each before reading (default 100)")
    p.add_argument("--settle", type=float, default=3.0, help="seconds to wait after the scrapes (default 3)")
    args = p.parse_args()

    targets = side_by_side_targets(args.memdiagd, args.config, args.node_exporter)
    try:
        for t in targets:
            t.start()
        for t in targets:
            t.wait_ready(15)
        for _ in range(args.scrapes):
            for t in targets:
                t.scrape()
        time.sleep(args.settle)
        figures = {t.name: (status_kib(t.proc.pid, "VmHWM"), status_kib(t.proc.pid, "VmRSS")) for t in targets}
        rollups = {t.name: rollup_kib(t.proc.pid) for t in targets}
        children = children_of(next(t for t in targets if t.name == "memdiagd").proc.pid)
        # Which sources ran: a peak measured with an eBPF source that failed to load says nothing.
        body = next(t for t in targets if t.name == "memdiagd").scrape().decode()
        up = sorted(line.split('"')[1] + "=" + line.rsplit(" ", 1)[1] for line in body.splitlines()
                    if line.startswith('memdiag_source_up{source="'))
    finally:
        for t in targets:
            t.stop()
    (m_hwm, m_rss), (n_hwm, n_rss) = figures["memdiagd"], figures["node_exporter"]
    print(f"after {args.scrapes} scrapes each (+{args.settle:g} s), MiB   memdiagd  node_exporter  ratio")
    print(f"VmHWM (peak)                          {m_hwm / 1024:8.1f}  {n_hwm / 1024:13.1f}  {m_hwm / n_hwm:.3f}")
    print(f"VmRSS                                 {m_rss / 1024:8.1f}  {n_rss / 1024:13.1f}  {m_rss / n_rss:.3f}")
    for field in ("Pss", "Private", "Rss file"):
        m, n = rollups["memdiagd"][field], rollups["node_exporter"][field]
        print(f"{field + ' (smaps_rollup)':<38}{m / 1024:8.1f}  {n / 1024:13.1f}  {m / n if n else 0:.3f}")
    print(f"peak under half of node_exporter's: {'yes' if m_hwm * 2 < n_hwm else 'NO'}")
    print("memdiagd's sources up (1) or not (0): " + ", ".join(up))
    # Not in memdiagd's figures, and said here so nobody mistakes them for gone: the canary's
    # child holds its working set (the measurement itself); the eBPF loader's child lived for
    # its load only (its peak: ReclaimStallLive.LoadingParsesTheKernelsBtfInTheChildNotHere).
    for pid, argv, hwm, rss in children:
        print(f"memdiagd's child {pid} ({argv}): VmHWM {hwm / 1024:.1f} MiB, VmRSS {rss / 1024:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
