# SPDX-License-Identifier: Apache-2.0
"""systemd-oomd beside memdiag: a slice managed by systemd-oomd (ManagedOOMMemoryPressure=kill at
20 %, held 5 s) with a grower throttled past the slice's MemoryHigh= and a reader of cached data.
When systemd-oomd kills a cgroup under the slice, memdiag reports the kill, by systemd-oomd,
counted from its mark (the user.oomd_kill / user.oomd_ooms extended attributes) on the unit it
killed; and before it, memdiag's own verdict on the slice named the grower contributor."""
import os
import time

SLICE = "memdiagoomd.slice"
SLICE_PATH = "/" + SLICE
GROWER_UNIT = "memdiag-oomd-grower"
GROWER_PATH = "%s/%s.service" % (SLICE_PATH, GROWER_UNIT)
CONF = "/etc/systemd/oomd.conf.d/memdiag-vm.conf"

GROWER = r"""
import mmap, time
m = mmap.mmap(-1, 300 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
for off in range(0, 300 << 20, 4096):
    m[off] = 1
    if off % (8 << 20) == 0:
        time.sleep(0.05)
time.sleep(3600)
"""



def run(lab):
    from lab import READER, scope, uncached_file
    os.makedirs(os.path.dirname(CONF), exist_ok=True)
    with open(CONF, "w") as f:
        f.write("[OOM]\nDefaultMemoryPressureDurationSec=5s\n")
    lab.sh("systemctl", "restart", "systemd-oomd")
    active = lab.sh("systemctl", "is-active", "systemd-oomd", check=False).stdout.strip()
    if not lab.check("systemd-oomd runs", active == "active", active):
        return
    lab.sh("systemctl", "set-property", "--runtime", SLICE, "MemoryHigh=128M", "MemoryMax=400M",
           "ManagedOOMMemoryPressure=kill", "ManagedOOMMemoryPressureLimit=20%")
    path = uncached_file("/var/tmp/memdiag-oomd-cached", 64)
    lab.service("memdiag-oomd-reader", SLICE, ["python3", "-c", READER, path])
    time.sleep(3)
    lab.service(GROWER_UNIT, SLICE, ["python3", "-c", GROWER])

    named = set()

    def oomd_kill():
        report = lab.diagnosis()
        s = scope(report, SLICE_PATH) or {}
        named.update(m.get("cgroup") for m in s.get("contributors", []))
        items = [i for i in report.get("breaking", {}).get("items", [])
                 if i.get("kind") == "oom_kill" and i.get("source") == "systemd-oomd"]
        return bool(items), items
    ok = lab.eventually("memdiag reports a kill by systemd-oomd", oomd_kill, 90, interval=0.3)
    journal = lab.sh("journalctl", "-u", "systemd-oomd", "--no-pager", "-o", "cat", check=False).stdout
    # "Killed /memdiagoomd.slice/memdiag-oomd-grower.service due to memory pressure for ..."
    said = [line.split()[1] for line in journal.splitlines() if line.startswith("Killed ")]
    lab.check("systemd-oomd says it killed a unit of the slice", any(p.startswith(SLICE_PATH + "/") for p in said),
              said)
    if ok and said:
        # Which unit it picks is its own choice (the most reclaim activity): the grower or the
        # reader. memdiag names the one it marked.
        item = oomd_kill()[1][0]
        lab.check("the kill names the unit systemd-oomd killed", item.get("cgroup") == said[0]
                  and item.get("subject") == said[0], item)
        lab.check("counted from systemd-oomd's mark", item.get("counted_by") == "xattr", item.get("counted_by"))
    lab.check("memdiag named the grower contributor of the slice before the kill",
              any(c and c.endswith(GROWER_UNIT + ".service") for c in named), sorted(c or "" for c in named))
    os.unlink(CONF)
    lab.sh("systemctl", "restart", "systemd-oomd")
