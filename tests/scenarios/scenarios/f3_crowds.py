# SPDX-License-Identifier: Apache-2.0
"""Twelve similar jobs under one limited parent, each holding the same anon and thrashing its
own file: nobody holds 10 %, and still someone must be named."""
from expect import check, eventually, level_at_least

FINDING = "3 crowds"
WHAT = "/jobs (1.5G limit), 12 children each holding 96 MiB and thrashing its own 100 MiB file"
EXPECTED = "/jobs stalls; someone named (contributors or processes), with the number of similar members said"
MiB = 1 << 20
N = 12


def prepare(lab):
    lab.cgroup("/jobs", 1536 * MiB)
    for i in range(1, N + 1):
        lab.cgroup("/jobs/j%02d" % i, None)
        setattr(lab, "f%02d" % i, lab.file("r%02d" % i, 100))
    # All started before the daemon: none of them is seen growing, they are all alike.
    for i in range(1, N + 1):
        lab.start("j%02d" % i, lab.cg("/jobs/j%02d" % i), "holdthrash", 96, getattr(lab, "f%02d" % i))


PHASES = [("settle", 4, None), ("observe", 12, None)]

EXPECT = [
    level_at_least("/jobs", "medium"),
    eventually(check("/jobs", "named", "nonempty")),
    eventually(check("/jobs", "similar_members", ">=", 1)),
]
