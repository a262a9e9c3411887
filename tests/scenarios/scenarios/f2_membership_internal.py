# SPDX-License-Identifier: Apache-2.0
"""A v1 cgroup with a process of its own beside a child: the hog in /job itself is the cause,
the child that thrashes is its victim."""
from expect import always, any_of, check, eventually, level_at_least, no_step

FINDING = "2 membership"
WHAT = ("/job (1.5G limit): a 1 GiB hog directly in /job; /job/reader holds 100 MiB and thrashes "
        "an 800 MiB file")
EXPECTED = ("/job stalls; the hog (its pid, or /job's unattributed remainder) is the contributor; "
            "/job/reader a victim, never a contributor")
GiB, MiB = 1 << 30, 1 << 20


def prepare(lab):
    lab.cgroup("/job", 1536 * MiB)
    lab.cgroup("/job/reader", None)
    lab.data = lab.file("data800", 800)
    lab.start("hog", lab.cg("/job"), "hold", 1024)


PHASES = [("settle", 6, lambda lab: lab.start("reader", lab.cg("/job/reader"), "holdthrash", 100, lab.data)),
          ("observe", 12, None)]

EXPECT = [
    level_at_least("/job", "medium"),
    eventually(any_of(check("/job", "processes", "has", "job:hog"),
                      check("/job", "unattributed_bytes", ">=", 512 * MiB))),
    always(check("/job", "contributors", "lacks", "/job/reader")),
    eventually(check("/job", "victims", "has", "/job/reader")),
    no_step(r"Stop or limit /job/reader"),
]
