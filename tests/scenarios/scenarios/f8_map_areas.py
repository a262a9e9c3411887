# SPDX-License-Identifier: Apache-2.0
"""A process at vm.max_map_count: any mmap, and any munmap or mprotect that splits a mapping,
now fails with ENOMEM whatever the free memory. The verdict says it is about to break."""
from expect import check, eventually

FINDING = "8 breaking"
WHAT = "/maps (256M limit): a process splits one mapping with mprotect until vm.max_map_count refuses"
EXPECTED = "'breaking' names its pid with its map count; the text report says it"
MiB = 1 << 20
TEXT = True


def prepare(lab):
    lab.cgroup("/maps", 256 * MiB)


def start(lab):
    j = lab.start("maps", lab.cg("/maps"), "maps", 70000)
    lab.notes.append("the process: %s" % j.ready_line)


PHASES = [("settle", 2, start), ("observe", 6, None)]

EXPECT = [
    eventually(check("breaking", "breaking_items", "has_item", {"kind": "map_areas", "job": "job:maps",
                                                                "min_value": 60000})),
    eventually(check("report", "text", "match", r"(?i)\b{pid:maps}\b[^\n]*(max_map_count|map areas|mappings|map count)|"
                                              r"(max_map_count|map areas|mappings|map count)[^\n]*\b{pid:maps}\b"),
               label="eventually the text report names the pid with its map count"),
]
