# SPDX-License-Identifier: Apache-2.0
"""A slow steady leak near a cgroup's limit: the fit is perfect and the end is near, so an
exhaustion forecast must appear although the rate is far below 1 % of anything per minute."""
from expect import check, eventually

FINDING = "7 forecast"
WHAT = "/leak (256M limit) touches 210 MiB, then leaks 0.5 MiB/s (its limit in about 90 s)"
EXPECTED = "an exhaustion forecast for /leak (its scope, or a 'breaking' cgroup_limit item)"
MiB = 1 << 20
METRICS = True  # a cgroup that does not stall has its forecast in the metrics only


def prepare(lab):
    lab.cgroup("/leak", 256 * MiB)
    # Started (its 210 MiB touched) before the daemon: the line the forecast fits is the leak's,
    # not the step of the first touch, which would stay in its 60 s window all scenario long.
    lab.start("leak", lab.cg("/leak"), "leak", 210, 0.5)

# The shipped forecast fits a 60 s window and answers once it spans half of it: the scenario
# runs 38 s so a forecast that follows the defaults has its chance (at 0.5 MiB/s the limit is
# still some 50 s away at the end).
PHASES = [("settle", 3, None), ("observe", 35, None)]

EXPECT = [eventually(check("/leak", "forecast", "true"))]
