# SPDX-License-Identifier: Apache-2.0
"""Transparent huge pages on a healthy node: allocate, touch and free 512 MiB with
MADV_HUGEPAGE in a loop (compaction where it must), well within a 1G limit."""
from expect import calm, no_step

FINDING = "benign"
WHAT = "/thp (1G limit) maps 512 MiB with MADV_HUGEPAGE, touches it, unmaps it, in a loop"
EXPECTED = "node and /thp none/low, no roles, no step to stop anything"
MiB = 1 << 20


def prepare(lab):
    lab.cgroup("/thp", 1024 * MiB)


PHASES = [("settle", 3, lambda lab: lab.start("thp", lab.cg("/thp"), "thp", 512)), ("observe", 12, None)]

EXPECT = calm("node") + calm("/thp") + [no_step(r"Stop or limit")]
