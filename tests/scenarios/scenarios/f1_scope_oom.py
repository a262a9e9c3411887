# SPDX-License-Identifier: Apache-2.0
"""OOM kills at one cgroup's own limit, beside a healthy idle holder: the kills are that
cgroup's, the node is calm."""
from expect import always, check, eventually, level_at_most, no_step

FINDING = "1 scope"
WHAT = "/bigidle (4G limit) holds 2 GiB idle; /ceiling (256M limit) is OOM-killed holding 400 MiB, every 3 s"
EXPECTED = "node none/low, no node roles; the kills attributed to /ceiling (its reasons, a 'breaking' OOM item)"
GiB, MiB = 1 << 30, 1 << 20


def prepare(lab):
    lab.cgroup("/bigidle", 4 * GiB)
    lab.cgroup("/ceiling", 256 * MiB)
    lab.start("hold", lab.cg("/bigidle"), "hold", 2048)


def crash_loop(lab):
    lab.start("oomer", lab.cg("/ceiling"), wait_ready=False,
              shell="while :; do %s hold 400; sleep 3; done" % lab.workload_cmd())


PHASES = [("settle", 3, crash_loop), ("observe", 13, None)]

EXPECT = [
    level_at_most("node", "low"),
    always(check("node", "contributors", "lacks", "/bigidle")),
    no_step(r"Stop or limit /bigidle"),
    eventually(check("/ceiling", "reasons", "has", "oom_kill")),
    eventually(check("breaking", "breaking_items", "has_item", {"kind": "oom_kill", "at": "/ceiling"})),
]
