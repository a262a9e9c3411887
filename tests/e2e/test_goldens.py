# SPDX-License-Identifier: Apache-2.0
"""The golden expositions of the fixture trees (tests/fixtures/*.prom), checked three ways:
memdiagd's output equals the checked-in file (a change shows as a diff); every golden passes
`promtool check metrics`; and, independently of both, every value of the exported families
equals what the fixture's own files say under the export contract of docs/sources.md (fixture_oracle.py), so a
golden written from a wrong output cannot make a wrong output pass.

Regenerating a golden is not part of any test: tests/fixtures/regenerate-goldens.py writes
them, and the diff is reviewed before commit."""
import os
import unittest

import fixture_oracle as oracle
from goldens import GOLDENS, exposition, golden_path, stable_lines
from harness import FIXTURES, promtool_check

# golden.yaml's processes.map_areas_threshold
PROCESS_THRESHOLD = 0.0001
# the cgroup source's default max_depth (golden-cgroup-v2.yaml leaves it)
CGROUP_MAX_DEPTH = 6


class Goldens(unittest.TestCase):
    def test_no_regeneration_in_the_asserting_run(self):
        # A run that writes the goldens and compares against them proves nothing.
        self.assertFalse(os.environ.get("MEMDIAG_UPDATE_GOLDEN"),
                         "MEMDIAG_UPDATE_GOLDEN is no longer read: run tests/fixtures/regenerate-goldens.py, "
                         "review the diff, then run the tests")

    def test_exposition_matches_golden(self):
        for name in GOLDENS:
            with self.subTest(golden=name):
                rc, out, err = exposition(name)
                self.assertEqual(rc, 0, err)
                with open(golden_path(name)) as f:
                    self.assertEqual(stable_lines(out), f.read(),
                                     "exposition of %s changed; if intended, run tests/fixtures/regenerate-goldens.py "
                                     "and review the diff" % name)

    def test_every_golden_passes_promtool(self):
        for name in GOLDENS:
            with self.subTest(golden=name):
                with open(golden_path(name)) as f:
                    self.assertEqual(promtool_check(f.read()), (0, ""))

    def test_node_values_are_the_fixture_files(self):
        for tree in ("kernel-5.4", "kernel-6.18"):
            with self.subTest(tree=tree):
                rc, out, err = exposition(tree)
                self.assertEqual(rc, 0, err)
                expected = oracle.expected_node(os.path.join(FIXTURES, tree, "proc"), PROCESS_THRESHOLD)
                self.assertGreater(len(expected), 200)
                self.assertEqual(oracle.compare(out, expected, oracle.node_families), [])

    def test_cgroup_values_and_kubernetes_labels_are_the_fixture_files(self):
        rc, out, err = exposition("cgroup-v2")
        self.assertEqual(rc, 0, err)
        expected = oracle.expected_cgroup_v2(os.path.join(FIXTURES, "cgroup-v2"), CGROUP_MAX_DEPTH)
        self.assertGreater(len(expected), 500)
        # the identities docs/sources.md promises are among them
        pods = {dict(k[1]).get("pod_uid") for k in expected} - {None}
        self.assertEqual(len(pods), 4, pods)
        self.assertEqual(oracle.compare(out, expected, oracle.cgroup_families), [])


if __name__ == "__main__":
    unittest.main()
