# SPDX-License-Identifier: Apache-2.0
"""Page-cache streaming: a file larger than the cgroup's limit read once, front to back, at a
steady rate. The cache it evicts is its own and never read again: the cgroup works as meant.
(Reading the same file in a loop is not streaming: every pass reads back what the last one
evicted, and the kernel counts that wait as a memory stall, rightly.)"""
from expect import calm, no_step

FINDING = "benign"
WHAT = "/stream (256M limit) reads a 1 GiB file once at 64 MiB/s"
EXPECTED = "node and /stream none/low, no roles, no step to stop anything"
MiB = 1 << 20


def prepare(lab):
    lab.cgroup("/stream", 256 * MiB)
    lab.data = lab.file("data1g", 1024)


PHASES = [("settle", 3, lambda lab: lab.start("reader", lab.cg("/stream"), "passes", lab.data, 64)),
          ("observe", 12, None)]

EXPECT = calm("node") + calm("/stream") + [no_step(r"Stop or limit")]
