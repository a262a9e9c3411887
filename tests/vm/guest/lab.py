# SPDX-License-Identifier: Apache-2.0
"""What the guest's scenarios share (python3 in the guest, standard library only): the daemon's
HTTP answers, systemd, cgroup v2 files, workloads in transient units, and checks that record
what was asserted and what was seen."""
import json
import os
import re
import subprocess
import time
import urllib.request

LISTEN = "127.0.0.1:9842"
CGROUP = "/sys/fs/cgroup"
MiB = 1 << 20


class Lab:
    def __init__(self, name):
        self.name = name
        self.checks = []

    # --- checks ---
    def check(self, what, ok, seen=None):
        self.checks.append({"check": what, "ok": bool(ok), "seen": seen})
        print("%s %s: %s%s" % ("ok  " if ok else "FAIL", self.name, what, "" if seen is None else " (seen: %s)" % seen),
              flush=True)
        return bool(ok)

    def eventually(self, what, probe, timeout, interval=0.5):
        """Polls probe() (returns (ok, seen)) until ok or the timeout; records the last seen."""
        deadline = time.monotonic() + timeout
        started = time.monotonic()
        while True:
            ok, seen = probe()
            if ok or time.monotonic() > deadline:
                return self.check("%s (within %g s, after %.1f s)" % (what, timeout, time.monotonic() - started),
                                  ok, seen)
            time.sleep(interval)

    # --- the daemon ---
    @staticmethod
    def get(path, timeout=5):
        with urllib.request.urlopen("http://%s%s" % (LISTEN, path), timeout=timeout) as r:
            return r.status, r.read().decode()

    def diagnosis(self):
        return json.loads(self.get("/api/v1/diagnosis")[1])

    def metrics(self):
        samples = {}
        for line in self.get("/metrics")[1].splitlines():
            if not line or line[0] == "#":
                continue
            m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$", line)
            if m:
                samples[(m.group(1), m.group(2) or "")] = float(m.group(3))
        return samples

    @staticmethod
    def sh(*argv, check=True, timeout=60):
        p = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout)
        if check and p.returncode != 0:
            raise RuntimeError("%s: exit %d: %s" % (" ".join(argv), p.returncode, p.stderr.strip()[-500:]))
        return p

    # --- workloads: transient services under a slice (systemd-run), stopped at the end ---
    def service(self, unit, slice_, argv, properties=()):
        cmd = ["systemd-run", "--unit", unit, "--slice", slice_, "--collect", "-p", "MemoryAccounting=yes"]
        for p in properties:
            cmd += ["-p", p]
        self.sh(*(cmd + list(argv)))
        self.units.append(unit)

    units = []

    def stop_all(self):
        for unit in self.units:
            subprocess.run(["systemctl", "stop", unit], capture_output=True)
        self.units = []


# A reader of cached data: reads the file named by its argument over and over.
READER = r"""
import sys
while True:
    with open(sys.argv[1], "rb") as f:
        while f.read(1 << 20):
            pass
"""

# A reader that charges only page cache to a cgroup it is moved into: it starts, fills its one
# buffer and says "ready" before it is moved (charges stay where they were made), and it starts
# reading only when a line arrives on its stdin, once it is there. Without swap a reader's anon
# memory cannot be reclaimed; charged to a cgroup at its memory.high, it would hold the cgroup
# over the limit rather than in reclaim.
CACHE_ONLY_READER = r"""
import sys
buffer = memoryview(bytearray(b"x" * (1 << 20)))
print("ready", flush=True)
sys.stdin.readline()
while True:
    with open(sys.argv[1], "rb", buffering=0) as f:
        while f.readinto(buffer):
            pass
"""


def uncached_file(path, mib):
    """Writes `mib` MiB of random data to `path`, on disk and out of the page cache. Page cache
    is charged to the cgroup that first faults it in: dropped here, a reader's own reads charge
    it to the reader's cgroup (written and kept, it would stay this runner's)."""
    with open(path, "wb") as f:
        f.write(os.urandom(1 << 20) * mib)
        f.flush()
        os.fsync(f.fileno())
        os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
    return path


def flat_keyed(path):
    """A cgroup's flat keyed file ("key value" lines: memory.events, memory.stat) as a dict."""
    with open(path) as f:
        return {key: int(value) for key, value in (line.split() for line in f)}


def scope(report, path):
    """The cgroup scope `path` of a diagnosis report, or None."""
    for s in report.get("cgroups", []):
        if s.get("cgroup") == path:
            return s
    return None
