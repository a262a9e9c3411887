# SPDX-License-Identifier: Apache-2.0
"""tmpfs filled within a limit: 200 MiB in a private tmpfs, charged to a 512M cgroup."""
from expect import calm, no_step

FINDING = "benign"
WHAT = "/tmpfs (512M limit) writes 200 MiB into a private tmpfs mount and keeps it"
EXPECTED = "node and /tmpfs none/low, no roles, no step to stop anything"
MiB = 1 << 20
TOOLS = ("unshare",)


def prepare(lab):
    lab.cgroup("/tmpfs", 512 * MiB)
    lab.mnt = lab.path("mnt")
    import os
    os.mkdir(lab.mnt)


PHASES = [("settle", 3, lambda lab: lab.start("tmpfs", lab.cg("/tmpfs"), shell=(
    "exec unshare -m --propagation private sh -c 'mount -t tmpfs -o size=300m none %s && "
    "dd if=/dev/zero of=%s/f bs=1M count=200 status=none && echo ready && exec sleep 100000'" % (lab.mnt, lab.mnt)))),
          ("observe", 8, None)]

EXPECT = calm("node") + calm("/tmpfs") + [no_step(r"Stop or limit")]
