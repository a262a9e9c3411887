# SPDX-License-Identifier: Apache-2.0
"""memory.high throttling seen as a stall of the service it throttles: a transient service with
MemoryHigh=64M (no MemoryMax, no swap in the guest) grows 160 MiB of anonymous memory. The
kernel cannot reclaim it, so it throttles the service on each return to user space; that is
the service's own stall: its memory.events `high` counts, eBPF times its reclaim at the limit,
and its scope's verdict says so, while the node stays calm."""
import time

SLICE = "memdiaghigh.slice"
UNIT = "memdiag-throttled"
PATH = "/%s/%s.service" % (SLICE, UNIT)

GROWER = r"""
import mmap, time
m = mmap.mmap(-1, 160 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
for off in range(0, 160 << 20, 4096):
    m[off] = 1
time.sleep(3600)
"""


def run(lab):
    from lab import scope
    lab.service(UNIT, SLICE, ["python3", "-c", GROWER], properties=("MemoryHigh=64M",))

    def high_events():
        s = lab.metrics()
        v = s.get(("memdiag_cgroup_memory_events_total", '{cgroup="%s",unit="%s.service",event="high"}' % (PATH, UNIT)))
        if v is None:  # label order as exported
            v = next((val for (n, labels), val in s.items() if n == "memdiag_cgroup_memory_events_total"
                      and 'cgroup="%s"' % PATH in labels and 'event="high"' in labels), None)
        return (v or 0) > 0, v
    lab.eventually("memory.events high of the service counts in /metrics", high_events, 30)

    def throttled_scope():
        s = scope(lab.diagnosis(), PATH) or {}
        level = s.get("level", {}).get("value", 0)
        reasons = sorted(r["code"] for r in s.get("reasons", []))
        return level >= 2 and "stall_time" in reasons, {"level": s.get("level"), "reasons": reasons}
    lab.eventually("the service's scope is medium or worse, by its own stall time", throttled_scope, 20)

    def ebpf_memcg():
        s = lab.metrics()
        count = sum(v for (n, labels), v in s.items() if n == "memdiag_reclaim_stall_seconds_count"
                    and 'kind="memcg"' in labels and PATH in labels)
        return count > 0, count
    lab.eventually("eBPF timed reclaim at the service's limit (kind memcg)", ebpf_memcg, 20)
    report = lab.diagnosis()
    node = report.get("stall", {}).get("level", {}).get("name")
    lab.check("the node stays calm", node in ("none", "low"), node)
    at_limit = report.get("stall", {}).get("cgroups_at_limit")
    lab.check("the node lists cgroups at their limits", bool(at_limit), at_limit)
