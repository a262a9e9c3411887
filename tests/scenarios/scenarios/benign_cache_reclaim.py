# SPDX-License-Identifier: Apache-2.0
"""A cgroup reclaiming its own page cache at its limit: dd writes a file larger than the limit,
over and over, each block synced (oflag=dsync); the cache it evicts is its own, clean, written
and done with. (Without the syncs, v1 reclaim at the limit waits for the writeback of dirty
pages: the kernel counts a real stall, which f5_sustained uses.)"""
from expect import calm, no_step

FINDING = "benign"
WHAT = "/dd (256M limit) writes a 600 MiB file with dd (8 MiB blocks, oflag=dsync), in a loop"
EXPECTED = "node and /dd none/low, no roles, no step to stop anything"
MiB = 1 << 20


def prepare(lab):
    lab.cgroup("/dd", 256 * MiB)


PHASES = [("settle", 3, lambda lab: lab.start("dd", lab.cg("/dd"), wait_ready=False,
                                             shell="while :; do dd if=/dev/zero of=%s bs=8M count=75 oflag=dsync status=none; "
                                                   "rm -f %s; done" % (lab.path("out"), lab.path("out")))),
          ("observe", 12, None)]

EXPECT = calm("node") + calm("/dd") + [no_step(r"Stop or limit")]
