# SPDX-License-Identifier: Apache-2.0
"""Copy-on-write after fork: 24 sleeping children of a process that touched 1 GiB are charged
24 GiB of commit, which never comes due while they only read."""
from expect import always, check, eventually

FINDING = "6 promises"
WHAT = "/forky (1.5G limit) touches 1 GiB of private anon, then forks 24 children that sleep"
EXPECTED = "node overcommit risk stays none (copy-on-write sharing split out, about 24 GiB of it)"
GiB, MiB = 1 << 30, 1 << 20


def prepare(lab):
    lab.cgroup("/forky", 1536 * MiB)


PHASES = [("settle", 3, lambda lab: lab.start("forky", lab.cg("/forky"), "fork", 1024, 24)),
          ("observe", 8, None)]

EXPECT = [
    always(check("overcommit", "overcommit_level", "<=", "none")),
    eventually(check("overcommit", "cow_shared_bytes", ">=", 8 * GiB)),
]
