# SPDX-License-Identifier: Apache-2.0
"""A v1 cgroup without a cgroup2 twin (no PSI of its own) thrashing at its limit, beside the same
with a twin: the missing signal lowers the confidence, not the level."""
from expect import check, eventually, level_at_least

FINDING = "9 missing signals"
WHAT = "/thr (256M limit, no cgroup2 twin) and /thr2 (the same, with a twin) each thrash a 400 MiB file"
EXPECTED = "/thr high+ like /thr2, with its missing signal said and confidence 'lower bound'"
MiB = 1 << 20


def prepare(lab):
    lab.cgroup("/thr", 256 * MiB, twin=False)
    lab.cgroup("/thr2", 256 * MiB)
    lab.a = lab.file("a400", 400)
    lab.b = lab.file("b400", 400)


def start(lab):
    lab.start("thr", lab.cg("/thr"), "thrash", lab.a)
    lab.start("thr2", lab.cg("/thr2"), "thrash", lab.b)


PHASES = [("settle", 6, start), ("observe", 12, None)]

# /thr2 is the yardstick: its own PSI, sustained, reads medium or high on a loaded two-core
# machine (two thrashers side by side); /thr, without PSI, must not read less than high.
EXPECT = [
    level_at_least("/thr2", "medium"),
    level_at_least("/thr", "high"),
    eventually(check("/thr", "confidence", "==", "lower_bound")),
    eventually(check("/thr", "missing_signals", "nonempty")),
]
