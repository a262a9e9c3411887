# SPDX-License-Identifier: Apache-2.0
"""A memcg OOM kill attributed to the unit whose limit caused it: a slice with MemoryMax=150M and
under it a service that grows past it (no swap): the kernel kills the service's python3. memdiag
names the slice as the scope whose limit killed, the victim's pid, comm and cgroup; the v2
counters, hierarchical (the slice's memory.events `oom_kill` counts its descendants' kills),
count that one OOM once; and the node is not said to be stalled by it."""
import os
import time

SLICE = "memdiagoom.slice"
UNIT = "memdiag-oomer"
SLICE_PATH = "/" + SLICE
PATH = "%s/%s.service" % (SLICE_PATH, UNIT)

GO = "/run/memdiag-oom-go"
GROWER = r"""
import mmap, os, sys, time
print("ready", flush=True)
while not os.path.exists("/run/memdiag-oom-go"):   # until the daemon watches the slice and the service
    time.sleep(0.1)
m = mmap.mmap(-1, 400 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
for off in range(0, 400 << 20, 4096):
    m[off] = 1
time.sleep(3600)
"""


def total(samples, name):
    return sum(v for (n, _), v in samples.items() if n == name)


def watched(samples, path):
    """Whether the daemon's event watcher covers the cgroup `path` (its OOM count is exported)."""
    return any(n == "memdiag_cgroup_oom_notifications_total" and 'cgroup="%s"' % path in labels
               for (n, labels) in samples)


def run(lab):
    if os.path.exists(GO):
        os.unlink(GO)
    lab.sh("systemctl", "set-property", "--runtime", SLICE, "MemoryMax=150M", "MemorySwapMax=0")
    lab.service(UNIT, SLICE, ["python3", "-c", GROWER])
    pid = int(lab.sh("systemctl", "show", "-p", "MainPID", "--value", UNIT + ".service").stdout.strip() or 0)
    lab.check("the service runs", pid > 0, pid)
    # The OOM is counted by the watches on memory.events: the grower waits until the daemon has
    # found the new slice and service and watches them (an OOM before that is eBPF's alone).
    lab.eventually("the daemon watches the slice and the service",
                   lambda: (watched(lab.metrics(), SLICE_PATH) and watched(lab.metrics(), PATH), None), 30)
    before = lab.metrics()
    with open(GO, "w"):
        pass

    def killed():
        items = [i for i in lab.diagnosis().get("breaking", {}).get("items", []) if i.get("kind") == "oom_kill"]
        mine = [i for i in items if i.get("pid") == pid or PATH in (i.get("cgroup") or "")]
        return bool(mine), items
    ok = lab.eventually("an oom_kill item for the service's process", killed, 40)
    items = killed()[1]
    mine = [i for i in items if i.get("pid") == pid or PATH in (i.get("cgroup") or "")]
    if ok:
        item = mine[0]
        lab.check("its subject is the slice whose limit killed", item.get("subject") == SLICE_PATH, item)
        lab.check("the victim's pid", item.get("pid") == pid, item.get("pid"))
        lab.check("the victim's comm", item.get("comm") == "python3", item.get("comm"))
        lab.check("the victim's cgroup", item.get("cgroup") == PATH, item.get("cgroup"))
    after = lab.metrics()
    ebpf = {labels: v for (n, labels), v in after.items() if n == "memdiag_oom_victims_total"}
    lab.check("eBPF counted one victim in the service's cgroup",
              sum(v for labels, v in ebpf.items() if PATH in labels) == 1, ebpf)
    counted = total(after, "memdiag_cgroups_oom_notifications_total") - total(before, "memdiag_cgroups_oom_notifications_total")
    lab.check("the hierarchical memory.events count the OOM once", counted == 1, counted)
    stall = lab.diagnosis().get("stall", {})
    node_reasons = sorted(r["code"] for r in stall.get("reasons", []))
    lab.check("the node is not said to stall for it", stall.get("level", {}).get("name") in ("none", "low")
              and "oom_kill" not in node_reasons, {"level": stall.get("level"), "reasons": node_reasons})
    os.unlink(GO)
