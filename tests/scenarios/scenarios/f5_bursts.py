# SPDX-License-Identifier: Apache-2.0
"""Short recurring bursts of reclaim: severity follows the time lost, so a burst of about a
second every 5 s reads low or medium, not high."""
from expect import level_at_most

FINDING = "5 duration"
WHAT = ("/burst (64M limit) writes a 128 MiB shared file mapping for 1 s every 5 s (reclaim waiting on "
        "writeback: a stall about a tenth of the time)")
EXPECTED = "node and /burst at most medium throughout"
MiB = 1 << 20


def prepare(lab):
    lab.cgroup("/burst", 64 * MiB)
    lab.data = lab.file("data128", 128)


PHASES = [("settle", 2, lambda lab: lab.start("burst", lab.cg("/burst"), "burst", lab.data, 1.0, 5)),
          ("observe", 18, None)]

EXPECT = [level_at_most("node", "medium"), level_at_most("/burst", "medium")]
