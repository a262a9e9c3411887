# SPDX-License-Identifier: Apache-2.0
"""An OOM kill caused by a limited v1 parent's limit, in its unlimited child: on v1 the kernel
counts the kill only in the child's own memcg; the verdict must name the parent whose limit
killed, and list the kill as something that broke."""
from expect import always, check, eventually, level_at_most

FINDING = "1 scope, 8 breaking"
WHAT = "/jobs (512M limit) with an unlimited child /jobs/g that is OOM-killed holding 700 MiB, every 3 s"
EXPECTED = "node none/low; /jobs has the oom_kill reason; 'breaking' lists the kill at /jobs"
MiB = 1 << 20


def prepare(lab):
    lab.cgroup("/jobs", 512 * MiB)
    lab.cgroup("/jobs/g", None)


def crash_loop(lab):
    lab.start("oomer", lab.cg("/jobs/g"), wait_ready=False,
              shell="while :; do %s hold 700; sleep 3; done" % lab.workload_cmd())


PHASES = [("settle", 3, crash_loop), ("observe", 13, None)]

EXPECT = [
    level_at_most("node", "low"),
    always(check("node", "contributors", "empty")),
    eventually(check("/jobs", "reasons", "has", "oom_kill")),
    eventually(check("breaking", "breaking_items", "has_item", {"kind": "oom_kill", "at": "/jobs"})),
]
