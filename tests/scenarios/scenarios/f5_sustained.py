# SPDX-License-Identifier: Apache-2.0
"""A sustained stall still rises fast: a writer of dirty pages in a 64M cgroup stalls most of the
time, and its scope reads high within seconds (the seed miniature test measures the 3 s from the
cgroup's own PSI; this is the short version)."""
from expect import level_at_least

FINDING = "5 duration"
WHAT = "/sust (64M limit) writes a 128 MiB shared mapping page by page, over and over"
EXPECTED = "/sust high or critical within 4 s of the writer's start"
MiB = 1 << 20


def prepare(lab):
    lab.cgroup("/sust", 64 * MiB)
    lab.data = lab.file("data128", 128)


PHASES = [("observe", 8, lambda lab: lab.start("writer", lab.cg("/sust"), "dirty", lab.data))]

EXPECT = [level_at_least("/sust", "high", within=4)]
