# SPDX-License-Identifier: Apache-2.0
"""A cgroup thrashing at its own limit beside a healthy idle holder: the stall is the cgroup's,
not the node's, and the holder is no one's contributor."""
from expect import always, check, eventually, level_at_least, level_at_most, no_step

FINDING = "1 scope"
WHAT = "/bigidle (4G limit) holds 2.5 GiB idle; /small (256M limit) thrashes a 400 MiB file"
EXPECTED = ("node none/low, no node roles; /small high+ with its own process named and a step to "
            "raise its limit; never 'Stop or limit /bigidle'")
GiB, MiB = 1 << 30, 1 << 20


def prepare(lab):
    lab.cgroup("/bigidle", 4 * GiB)
    lab.cgroup("/small", 256 * MiB)
    lab.ws = lab.file("ws400", 400)
    lab.start("hold", lab.cg("/bigidle"), "hold", 2560)


PHASES = [
    ("settle", 8, lambda lab: lab.start("thrash", lab.cg("/small"), "thrash", lab.ws)),
    ("observe", 14, None),
]

EXPECT = [
    level_at_most("node", "low"),
    always(check("node", "contributors", "empty")),
    always(check("node", "contributors", "lacks", "/bigidle")),
    no_step(r"Stop or limit /bigidle"),
    level_at_least("/small", "high"),
    eventually(check("/small", "processes", "has", "job:thrash")),
    eventually(check("report", "next_steps", "match", r"(?i)(rais|increas)\w*[^.]*limit[^.]*/small\b|"
                                                       r"/small\b[^.]*(rais|increas)\w*[^.]*limit"),
               label="eventually a next step raises /small's limit"),
]
