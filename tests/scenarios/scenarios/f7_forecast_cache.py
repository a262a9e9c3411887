# SPDX-License-Identifier: Apache-2.0
"""A second, slow pass over a file cached in a cgroup whose limit holds it: the cache grows
active, nothing is short, and reclaimable cache is never forecast as exhaustion."""
from expect import always, calm, check, no_step

FINDING = "7 forecast"
WHAT = "/ds (768M limit) reads a 500 MiB file once, then again at 12 MiB/s (a pass takes 40 s)"
EXPECTED = "no exhaustion forecast for /ds; /ds calm"
MiB = 1 << 20
METRICS = True  # a cgroup that does not stall has its forecast in the metrics only


def prepare(lab):
    lab.cgroup("/ds", 768 * MiB)
    lab.data = lab.file("data500", 500)


def start(lab):
    lab.start("ds", lab.cg("/ds"), shell="cat %s > /dev/null; exec %s passes %s 12" % (
        lab.data, lab.workload_cmd(), lab.data))

# 34 s: the shipped forecast answers once its 60 s window is half full.
PHASES = [("settle", 4, start), ("observe", 30, None)]

EXPECT = [always(check("/ds", "forecast", "false"))] + calm("/ds") + [no_step(r"Stop or limit")]
