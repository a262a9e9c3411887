#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""No tracked file refers to an issue tracker's numbers (the word "issue" or "issues" followed
by a number, with or without a space or a "#" between): the tracker is not part of the
repository, so such a number tells a reader nothing. Name the feature instead ("the status
page", "the series budget"). Nor to files in a directory beside the checkout (the one the notes
were kept in), or to those notes by name, which a clone does not have.

Every file `git ls-files` lists at the repository root is read, except binary files (a NUL
byte) and the kernel data under tests/fixtures/ (copies of /proc and /sys trees, the goldens
memdiagd renders from them, recordings): there only the hand-written files (README, scripts,
configs) are read. A failure lists file:line for each hit. Outside a git checkout (a source
tarball) there is nothing to list and the test is skipped (exit 77, ctest's SKIP_RETURN_CODE
for it)."""
import os
import re
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SKIPPED = 77

# The word, capitalised or not, singular or plural, then a number after an optional space and an
# optional "#". Not a bare "issues", "the target", "issuer" or a longer word ending in it.
TRACKER_NUMBER = re.compile(r"\b[Ii]ssues? ?#?\d+\b")
# A path into the directory next to the checkout that notes and reviews were kept in.
OUTSIDE_PATH = re.compile(r"\.\./" + r"shared\b")
# The notes kept beside the checkout, named without their path: the design, the platform's
# measured facts and the anchors' figures now live in docs/ under other names.
OUTSIDE_NOTES = re.compile(r"\b(?:" + "DESIGN|PLATFORM|ANCHORS" + r")\.md\b")

FIXTURES = "tests/fixtures/"
# Under tests/fixtures/ only these are written by hand; the rest is kernel data (file names like
# meminfo, memory.max, cgroup.procs) and what memdiagd makes of it (.prom goldens, .mdrec).
HAND_WRITTEN_FIXTURES = (".md", ".py", ".sh", ".yaml", ".yml", ".cmake", ".txt")


def checked(path):
    """Whether `path` (relative to the root, as git lists it) is a file this test reads."""
    if path.startswith(FIXTURES):
        return path.endswith(HAND_WRITTEN_FIXTURES)
    return True


def hits_in(text):
    """(line number, line) for each line of `text` with a tracker number."""
    return [(n, line) for n, line in enumerate(text.splitlines(), 1)
            if TRACKER_NUMBER.search(line) or OUTSIDE_PATH.search(line) or OUTSIDE_NOTES.search(line)]


def tracked_files():
    # safe.directory: the checkout may belong to another user than the one running ctest.
    p = subprocess.run(["git", "-c", "safe.directory=" + ROOT, "ls-files", "-z"], cwd=ROOT,
                       capture_output=True)
    if p.returncode != 0:
        raise AssertionError("git ls-files failed in %s: %s" % (ROOT, p.stderr.decode(errors="replace")))
    return [name for name in p.stdout.decode().split("\0") if name]


class NoTrackerNumbers(unittest.TestCase):
    def test_pattern(self):
        # Built from pieces so that this file itself holds no match.
        for flagged in ("(" + "issue" + " 16)", "Issue" + " 14's target", "# Issue" + " 3:",
                        "issue" + " #4", "issues" + " 5 and 6", "since issue" + "5."):
            with self.subTest(text=flagged):
                self.assertRegex(flagged, TRACKER_NUMBER)
        for clean in ("known issues", "the issue's target", "issue: none", "an issuer 5",
                      "tissue" + " 5", "issue" + "s are listed in 2 places", "reissue" + " 3"):
            with self.subTest(text=clean):
                self.assertNotRegex(clean, TRACKER_NUMBER)
        self.assertTrue(hits_in("see .." + "/shared/" + "DESIGN" + ".md"))
        self.assertTrue(hits_in("as " + "PLATFORM" + ".md measured"))
        self.assertFalse(hits_in("docs/development.md and docs/diagnosis.md"))
        self.assertFalse(hits_in("tests/shared_helpers.py, .." + "/shared" + "_memory"))

    def test_fixture_filter(self):
        self.assertFalse(checked(FIXTURES + "kernel-6.18/proc/meminfo"))
        self.assertFalse(checked(FIXTURES + "cgroup-v2/sys/fs/cgroup/a.slice/memory.max"))
        self.assertFalse(checked(FIXTURES + "kernel-5.4.prom"))
        self.assertTrue(checked(FIXTURES + "README.md"))
        self.assertTrue(checked(FIXTURES + "config/bad/yaml-syntax.yaml"))
        self.assertTrue(checked("probes/core/snapshot.hpp"))

    def test_no_tracked_file_has_tracker_numbers(self):
        if not os.path.exists(os.path.join(ROOT, ".git")):
            self.skipTest("%s is not a git checkout" % ROOT)
        files = tracked_files()
        self.assertTrue(files, "git ls-files listed nothing in %s" % ROOT)
        found = []
        for name in files:
            path = os.path.join(ROOT, name)
            # A file deleted in the work tree but still in the index, a symlink, a submodule.
            if not checked(name) or os.path.islink(path) or not os.path.isfile(path):
                continue
            with open(path, "rb") as f:
                data = f.read()
            if b"\0" in data:
                continue
            for n, line in hits_in(data.decode("utf-8", errors="replace")):
                found.append("%s:%d: %s" % (name, n, line.strip()))
        if found:
            self.fail("%d line(s) refer to an issue tracker's numbers or to files outside the "
                      "checkout; say what they stood for instead:\n%s" % (len(found), "\n".join(found)))


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=2).result
    if not result.wasSuccessful():
        sys.exit(1)
    sys.exit(SKIPPED if result.skipped else 0)
