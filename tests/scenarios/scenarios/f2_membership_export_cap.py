# SPDX-License-Identifier: Apache-2.0
"""The export cap keeps the cgroups under the most pressure first, so the idle holder that causes
the pressure is the one it drops: the verdict must still see its memory (its process, or the
scope's unattributed remainder) and must not make the thrashing victims its contributors."""
from expect import always, any_of, check, eventually, level_at_least, no_step

FINDING = "2 membership"
WHAT = ("sources.cgroup.max_cgroups 6; /pool (1.5G limit): /pool/hog holds 1 GiB idle, 8 siblings "
        "each hold 32 MiB and thrash their own 100 MiB file")
EXPECTED = ("/pool stalls; the hog named (its cgroup, its pid or /pool's unattributed remainder); "
            "no thrasher a contributor")
MiB = 1 << 20
N = 8
CONFIG = "sources:\n  cgroup:\n    include: [\"/mdscn*\"]\n    max_cgroups: 6\n"


def prepare(lab):
    lab.cgroup("/pool", 1536 * MiB)
    lab.cgroup("/pool/hog", None)
    for i in range(1, N + 1):
        lab.cgroup("/pool/t%d" % i, None)
        setattr(lab, "f%d" % i, lab.file("t%d" % i, 100))
    lab.start("hog", lab.cg("/pool/hog"), "hold", 1024)


def start(lab):
    for i in range(1, N + 1):
        lab.start("t%d" % i, lab.cg("/pool/t%d" % i), "holdthrash", 32, getattr(lab, "f%d" % i))


PHASES = [("settle", 6, start), ("observe", 12, None)]

THRASHERS = ["/pool/t%d" % i for i in range(1, N + 1)]
EXPECT = [
    level_at_least("/pool", "medium"),
    eventually(any_of(check("/pool", "contributors", "has", "/pool/hog"),
                      check("/pool", "processes", "has", "job:hog"),
                      check("/pool", "unattributed_bytes", ">=", 512 * MiB))),
    always(check("/pool", "contributors", "lacks", THRASHERS)),
    no_step(r"Stop or limit /pool/t\d"),
]
