# SPDX-License-Identifier: Apache-2.0
"""Runs one end-to-end test module and tells ctest in its exit status what happened: 0 every
test passed, 1 something failed or errored (or nothing ran), SKIPPED (77, ctest's
SKIP_RETURN_CODE for these tests) some tests skipped and none failed, so a skip shows as
"Not Run (Skipped)" instead of "Passed".

With MEMDIAG_REQUIRE_ALL=1 (.ci/run sets it: the CI machine has root, a v1 memory hierarchy,
eBPF, PSI, bpftrace and systemd-analyze) a skip is a failure: a test that is there to run on
that machine and did not is a hole in the run, not a detail. Either way the skipped tests are
listed with their reasons at the end.

    python3 run_module.py test_canary [test_canary.CanaryTest.test_x ...]"""
import os
import sys
import unittest

SKIPPED = 77


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    names = argv[2:] or [argv[1]]
    suite = unittest.defaultTestLoader.loadTestsFromNames(names)
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    if not result.wasSuccessful():
        return 1
    # A SkipTest from setUpClass/setUpModule is recorded as a skip without counting a test run.
    if result.testsRun == 0 and not result.skipped:
        print("run_module: no test ran in %s" % " ".join(names), file=sys.stderr)
        return 1
    if not result.skipped:
        return 0
    listing = "\n".join("  %s: %s" % (test.id(), reason) for test, reason in result.skipped)
    if os.environ.get("MEMDIAG_REQUIRE_ALL") == "1":
        print("run_module: MEMDIAG_REQUIRE_ALL=1 and %d test(s) skipped that must run here:\n%s" %
              (len(result.skipped), listing), file=sys.stderr)
        return 1
    print("run_module: %d test(s) skipped:\n%s" % (len(result.skipped), listing), file=sys.stderr)
    return SKIPPED


if __name__ == "__main__":
    sys.exit(main(sys.argv))
