#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""check_layers.py must fail on what it is there to catch: a tree with a planted violation of
each rule is refused naming file, line and include; a clean tree passes."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = os.path.join(HERE, "check_layers.py")


def tree(files):
    root = tempfile.mkdtemp(prefix="memdiag-layers-")
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    return root


def check(root):
    return subprocess.run([sys.executable, CHECK, root], capture_output=True, text=True)


CLEAN = {
    "probes/core/a.hpp": "#pragma once\n#include <vector>\n#include <cstdint>\n",
    "probes/analysis/b.hpp": '#include "probes/core/a.hpp"\n',
    "probes/linux/c.cpp": '#include <unistd.h>\n#include "probes/core/a.hpp"\n',
    "probes/bpf/d.cpp": '#include "probes/linux/c.hpp"\n',
    "exporters/e.cpp": '#include "probes/analysis/b.hpp"\n',
    "daemon/f.cpp": '#include "probes/bpf/d.hpp"\n#include "exporters/e.hpp"\n',
}


class CheckLayers(unittest.TestCase):
    def test_clean_tree_passes(self):
        p = check(tree(CLEAN))
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_each_violation_is_refused_with_file_and_line(self):
        cases = {
            "probes/core/x.hpp": ("#include <vector>\n#include <unistd.h>\n", "probes/core/x.hpp:2: includes <unistd.h>"),
            "probes/core/y.hpp": ('#include "probes/linux/c.hpp"\n', "probes/core/y.hpp:1: includes probes/linux/c.hpp"),
            "probes/analysis/z.cpp": ('#include "probes/linux/node/m.hpp"\n', "probes/analysis/z.cpp:1"),
            "probes/linux/w.cpp": ('#include "probes/bpf/d.hpp"\n', "probes/linux/w.cpp:1: includes probes/bpf/d.hpp"),
            "exporters/v.cpp": ('#include "probes/linux/c.hpp"\n', "exporters/v.cpp:1"),
            "probes/canary/u.cpp": ('#include "daemon/config.hpp"\n', "nothing includes daemon/"),
            "windows/t.cpp": ('#include "probes/linux/c.hpp"\n', "windows/t.cpp:1"),
        }
        for rel, (text, expected) in cases.items():
            with self.subTest(file=rel):
                files = dict(CLEAN)
                files[rel] = text
                p = check(tree(files))
                self.assertEqual(p.returncode, 1, p.stdout)
                self.assertIn(expected, p.stderr)


if __name__ == "__main__":
    unittest.main()
