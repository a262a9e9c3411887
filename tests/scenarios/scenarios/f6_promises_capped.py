# SPDX-License-Identifier: Apache-2.0
"""Promises capped by cgroup limits: six cgroups each promise 8 GiB against a 256 MiB limit. The
node cannot be asked for more than the limits; each cgroup has promised beyond its own limit
and that is its risk (an OOM kill at its ceiling), not the node's."""
from expect import always, check, eventually

FINDING = "6 promises"
WHAT = "vm.overcommit_memory=1; /cap1../cap6 (256M limits) each map 8 GiB private anon, untouched"
EXPECTED = "node overcommit risk none/low; the six cgroups said to have promised beyond their limits"
MiB = 1 << 20
N = 6


def prepare(lab):
    lab.sysctl("vm.overcommit_memory", 1)
    for i in range(1, N + 1):
        lab.cgroup("/cap%d" % i, 256 * MiB)


def start(lab):
    for i in range(1, N + 1):
        lab.start("cap%d" % i, lab.cg("/cap%d" % i), "promise", 8)


PHASES = [("settle", 3, start), ("observe", 8, None)]

EXPECT = [
    always(check("overcommit", "overcommit_level", "<=", "low")),
    eventually(check("overcommit", "cgroups_over_limit", "has", ["/cap%d" % i for i in range(1, N + 1)])),
]
