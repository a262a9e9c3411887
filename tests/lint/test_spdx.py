#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every source file says its licence in an SPDX line near its top: C and C++, Python, shell,
CMake, YAML, the unit and the packaging scripts. memdiag is Apache-2.0 (LICENSE); the eBPF
programs (probes/bpf/*.bpf.c) are GPL-2.0, as the kernel requires of programs that call its
GPL-only helpers, and the headers they share with the daemon are dual-licensed. Files under
tests/fixtures/ and the fuzz corpora are data, not source. Exits 77 outside a git checkout."""
import os
import re
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SKIPPED = 77
SOURCE_SUFFIXES = (".cpp", ".hpp", ".h", ".c", ".py", ".sh", ".cmake", ".yaml", ".yml", ".in", ".service",
                   ".jsonnet", ".libsonnet")
SOURCE_NAMES = ("CMakeLists.txt", "Dockerfile", "run", "postinst", "postrm", "prerm")
DATA_PREFIXES = ("tests/fixtures/", "tests/fuzz/corpus/")
SPDX = re.compile(r"SPDX-License-Identifier: (\S.*?)\s*(\*/)?$", re.M)
ALLOWED = {"Apache-2.0", "GPL-2.0", "Apache-2.0 OR GPL-2.0-only"}


def is_source(path):
    if path.startswith(DATA_PREFIXES):
        return False
    return path.endswith(SOURCE_SUFFIXES) or os.path.basename(path) in SOURCE_NAMES


def licence_of(text):
    """The SPDX expression within the first five lines, or None."""
    m = SPDX.search("\n".join(text.splitlines()[:5]))
    return m.group(1) if m else None


class Spdx(unittest.TestCase):
    def test_licence_of(self):
        self.assertEqual(licence_of("#!/bin/sh\n# SPDX-License-Identifier: Apache-2.0\n"), "Apache-2.0")
        self.assertEqual(licence_of("/* SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only */\n"),
                         "Apache-2.0 OR GPL-2.0-only")
        self.assertIsNone(licence_of("// a comment\n" * 5 + "// SPDX-License-Identifier: MIT\n"))
        self.assertTrue(is_source("daemon/main.cpp") and is_source(".ci/run") and is_source("tests/CMakeLists.txt"))
        self.assertFalse(is_source("tests/fixtures/config/bad/yaml-syntax.yaml") or is_source("docs/install.md"))

    def test_every_source_file_has_a_licence_line(self):
        p = subprocess.run(["git", "-c", "safe.directory=" + ROOT, "ls-files", "-z"], cwd=ROOT, capture_output=True)
        if p.returncode != 0:
            self.skipTest("not a git checkout")
        problems = []
        for name in p.stdout.decode().split("\0"):
            path = os.path.join(ROOT, name)
            if not name or not is_source(name) or not os.path.isfile(path):
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                licence = licence_of(f.read(2000))
            if licence is None:
                problems.append("%s: no SPDX-License-Identifier line in its first five lines" % name)
            elif licence not in ALLOWED:
                problems.append("%s: %s is none of %s" % (name, licence, sorted(ALLOWED)))
            elif name.endswith(".bpf.c") != (licence == "GPL-2.0"):
                problems.append("%s: %s (eBPF programs are GPL-2.0, everything else Apache-2.0)" % (name, licence))
        self.assertFalse(problems, "\n".join(problems))


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=2).result
    if not result.wasSuccessful():
        sys.exit(1)
    sys.exit(SKIPPED if result.skipped else 0)
