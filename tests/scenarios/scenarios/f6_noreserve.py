# SPDX-License-Identifier: Apache-2.0
"""A MAP_NORESERVE reservation (ASan shadow, a sparse arena) is no promise: not in Committed_AS,
never to be paid. It must not be named among the promise holders or in the next steps."""
from expect import always, check, no_step

FINDING = "6 promises"
WHAT = "/nr (64M limit) maps 1 TiB with MAP_NORESERVE, untouched"
EXPECTED = "/nr and its process never among the promise holders, never in a next step"
MiB = 1 << 20


def prepare(lab):
    lab.cgroup("/nr", 64 * MiB)


PHASES = [("settle", 2, lambda lab: lab.start("nr", lab.cg("/nr"), "noreserve", 1024)), ("observe", 6, None)]

EXPECT = [
    always(check("promises", "holder_processes", "lacks", "job:nr")),
    always(check("promises", "holder_cgroups", "lacks", "/nr")),
    no_step(r"/nr\b"),
]
