# SPDX-License-Identifier: Apache-2.0
"""Relief is RAM: a job touched once and swapped out frees almost nothing the scope is short
of; the job churning its resident working set is the contributor."""
from expect import always, check, eventually, no_step

FINDING = "4 relief"
WHAT = ("1 GiB swap file; /jobs (1G limit, swappiness 60): /jobs/x touches 600 MiB once then idles "
        "(swapped out), /jobs/y churns 450 MiB of anon and thrashes a 500 MiB file")
EXPECTED = ("/jobs/y the contributor; /jobs/x's relief in RAM under 400 MiB (its swap apart), never "
            "'x covers the shortfall'")
MiB = 1 << 20


def prepare(lab):
    lab.swap(1024)
    lab.cgroup("/jobs", 1024 * MiB, swappiness=60)
    lab.cgroup("/jobs/x", None, swappiness=60)
    lab.cgroup("/jobs/y", None, swappiness=60)
    lab.data = lab.file("data500", 500)
    lab.start("x", lab.cg("/jobs/x"), "hold", 600)


def start_y(lab):
    w = lab.workload_cmd()
    lab.start("y", lab.cg("/jobs/y"), shell="%s churn 450 & exec %s thrash %s" % (w, w, lab.data))


def after_phase(lab, phase):
    st = lab.cg("/jobs/x").stat()
    lab.notes.append("end of %s: /jobs/x resident anon %d MiB, swapped %d MiB" % (
        phase, st.get("total_rss", 0) >> 20, st.get("total_swap", 0) >> 20))


PHASES = [("settle", 8, start_y), ("observe", 12, None)]

EXPECT = [
    eventually(check("/jobs", "contributors", "has", "/jobs/y")),
    always(check("/jobs", "covering", "lacks", "/jobs/x")),
    always(check("/jobs", "relief:/jobs/x", "<=", 400 * MiB), only_if=check("/jobs", "contributors", "has", "/jobs/x")),
    no_step(r"/jobs/x\b.*\bcovers\b"),
]
