# SPDX-License-Identifier: Apache-2.0
"""The golden expositions: which fixture tree, with which flags, gives which checked-in file.
Shared by the test that compares (test_goldens.py) and the script that rewrites them
(tests/fixtures/regenerate-goldens.py), so the two never disagree on how a golden is made."""
import os
import subprocess

from harness import FIXTURES, MEMDIAGD

HERE = os.path.dirname(os.path.abspath(__file__))

# name -> memdiagd flags; the golden is tests/fixtures/<name>.prom
GOLDENS = {
    "kernel-5.4": ["--path.procfs", os.path.join(FIXTURES, "kernel-5.4", "proc"),
                   "--config", os.path.join(HERE, "golden.yaml")],
    "kernel-6.18": ["--path.procfs", os.path.join(FIXTURES, "kernel-6.18", "proc"),
                    "--config", os.path.join(HERE, "golden.yaml")],
    "cgroup-v2": ["--path.procfs", os.path.join(FIXTURES, "cgroup-v2", "proc"),
                  "--path.sysfs", os.path.join(FIXTURES, "cgroup-v2", "sys"),
                  "--config", os.path.join(HERE, "golden-cgroup-v2.yaml")],
}

# Series whose values depend on the time, the build or the machine, not on the fixture.
UNSTABLE = ("memdiag_build_info", "memdiag_source_duration_seconds", "memdiag_sampler_last_sample_timestamp_seconds",
            "memdiag_process_scan_duration_seconds", "memdiag_process_scan_timestamp_seconds",
            "memdiag_process_scan_in_flight_seconds", "memdiag_process_scan_cpu_seconds")


def golden_path(name):
    return os.path.join(FIXTURES, name + ".prom")


def stable_lines(text):
    return "".join(l + "\n" for l in text.splitlines() if not l.startswith(UNSTABLE) and
                   not any(l.startswith("# %s %s" % (kind, name)) for kind in ("HELP", "TYPE") for name in UNSTABLE))


def exposition(name):
    """(returncode, stdout, stderr) of `memdiagd --once` on the golden's fixture tree."""
    p = subprocess.run([MEMDIAGD, "--once", *GOLDENS[name]], capture_output=True, text=True, timeout=30)
    return p.returncode, p.stdout, p.stderr
