# SPDX-License-Identifier: Apache-2.0
"""The seed in miniature on systemd and cgroup v2: a slice with MemoryHigh= and MemoryMax=, and
under it transient services (systemd-run --slice): one grower of anonymous memory (300 MiB,
past MemoryHigh=256M: throttled, reclaiming) and two readers of 80 MiB of cached data each. The slice's own scope stalls: its verdict names the grower contributor
and the readers victims within 3 s of the slice's own PSI moving, and falls back to none after
the workloads stop. The node stays calm (most of the guest's memory is free)."""
import time

# No dash in the name: systemd reads "a-b.slice" as b under a.slice.
SLICE = "memdiagseed.slice"
SLICE_PATH = "/" + SLICE
MiB = 1 << 20

GROWER = r"""
import mmap, time
m = mmap.mmap(-1, 300 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
for off in range(0, 300 << 20, 4096):
    m[off] = 1
    if off % (8 << 20) == 0:
        time.sleep(0.05)   # ~160 MiB/s at most: a grower, not a bomb
time.sleep(3600)
"""



def psi_some_total(path):
    with open("/sys/fs/cgroup%s/memory.pressure" % path) as f:
        for line in f:
            if line.startswith("some"):
                return int(line.split("total=")[1])
    return 0


def run(lab):
    from lab import READER, flat_keyed, scope, uncached_file
    lab.sh("systemctl", "set-property", "--runtime", SLICE, "MemoryHigh=256M", "MemoryMax=400M")
    for i in (1, 2):
        # 80 MiB each: both fit beside the grower only at first.
        uncached_file("/var/tmp/memdiag-cached-%d" % i, 80)
    for i in (1, 2):
        lab.service("memdiag-reader%d" % i, SLICE, ["python3", "-c", READER, "/var/tmp/memdiag-cached-%d" % i])
    time.sleep(5)  # the readers' cache warm, the slice calm
    before = psi_some_total(SLICE_PATH)
    lab.service("memdiag-grower", SLICE, ["python3", "-c", GROWER])
    # When the slice's own PSI starts to move, the clock starts.
    moved_at = None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if psi_some_total(SLICE_PATH) > before + 50000:  # 50 ms stalled
            moved_at = time.monotonic()
            break
        time.sleep(0.2)
    if not lab.check("the slice's own PSI moved", moved_at is not None):
        return

    def slice_scope():
        s = scope(lab.diagnosis(), SLICE_PATH)
        level = (s or {}).get("level", {}).get("value", 0)
        return level >= 2, (s or {}).get("level")
    lab.eventually("the slice's scope is medium or worse", slice_scope, 3 + 2)  # 3 s, and a sample's slack
    # Roles settle over the next samples (the growth EMA, the readers' own PSI windows).
    def roles():
        s = scope(lab.diagnosis(), SLICE_PATH) or {}
        contributors = [m.get("cgroup") for m in s.get("contributors", [])]
        victims = [m.get("cgroup") for m in s.get("victims", [])]
        ok = (any(c and c.endswith("memdiag-grower.service") for c in contributors) and
              any(v and "memdiag-reader" in v for v in victims))
        # What the readers' own files say, for a run where they are not named.
        readers = {}
        for i in (1, 2):
            base = "/sys/fs/cgroup%s/memdiag-reader%d.service/" % (SLICE_PATH, i)
            try:
                with open(base + "memory.pressure") as f:
                    readers["reader%d psi" % i] = f.readline().strip()
                stat = flat_keyed(base + "memory.stat")
                readers["reader%d" % i] = {k: stat.get(k) for k in ("file", "workingset_refault_file")}
            except OSError as e:
                readers["reader%d" % i] = str(e)
        return ok, {"contributors": contributors, "victims": victims, "readers": readers, "scope": {
            k: s.get(k) for k in ("reasons", "shortfall_bytes", "available_bytes", "similar_members")}}
    lab.eventually("the grower is named contributor and a reader victim", roles, 10)
    node = lab.diagnosis().get("stall", {}).get("level", {}).get("name")
    lab.check("the node stays calm", node in ("none", "low"), node)

    lab.stop_all()

    def calm_again():
        s = scope(lab.diagnosis(), SLICE_PATH)
        return s is None or s.get("level", {}).get("value", 0) == 0, (s or {}).get("level")
    lab.eventually("the slice's scope is back to none", calm_again, 40)
