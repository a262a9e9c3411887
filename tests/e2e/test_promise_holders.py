# SPDX-License-Identifier: Apache-2.0
"""Who holds the promises, through the real daemon's /metrics with both scanners: a
child in its own v1 memory cgroup maps 8 GiB of private writable memory and does not touch it.
vm.overcommit_memory 0 lets it (the heuristic refuses only a single mapping larger than RAM plus
swap); the memory is promised, not used. The daemon must name that process (pid, comm) as the
top holder of unbacked promise, its cgroup likewise, and the node-wide sum must rise by about
8 GiB. Then the child touches 256 MiB: that much moves from its unbacked promise to its resident
anon memory.

Beside it, in a cgroup of its own, a second child whose commit is all of the kinds that do not
come due: 200 idle threads (8 MiB stacks each, 1.6 GiB) and a 2 GiB file mapped privately for
writing. It is committed as much as a real holder, and must not be named as one: its maps are read,
its stacks and file map are counted as not due, and the node-wide sum does not rise by them.

Needs root and a v1 memory hierarchy (this machine and CI); skipped, loudly, elsewhere."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

from harness import MEMDIAGD, V1_MEMORY, Daemon, V1Cgroup, die_with_parent, http_get, wait_until, write
from test_cgroup_churn import built_with_asan

GiB = 1 << 30
MiB = 1 << 20
REGION = 8 * GiB
TOUCHED = 256 * MiB
COMM = "memdiag-promise"  # 15 bytes: what the kernel keeps
# The child's promise is its region plus the interpreter's own heap and stack, less what of
# those is resident: a few MiB either way.
SLACK = 64 * MiB
# Other processes on the node start, grow and exit meanwhile (compilers of other builds, the
# suite's other tests: one released 1.2 GiB of promises within this test's few seconds under
# ctest -j2): the node-wide sum is compared with this tolerance, still well short of the region.
NODE_NOISE = 2 * GiB
# Above this, a private writable mapping is a reservation (sanitizer shadow, MAP_NORESERVE), not
# a promise any program means to keep.
RESERVATION = 1 << 40

# The child: names itself, maps the region (MAP_PRIVATE | MAP_ANONYMOUS, read-write, without
# MAP_NORESERVE: charged to Committed_AS), says so, then touches the first N bytes (one write
# per page) each time it reads "touch N" on stdin.
CHILD = r"""
import ctypes, mmap, sys
ctypes.CDLL(None).prctl(15, b"%s", 0, 0, 0)  # PR_SET_NAME
region = mmap.mmap(-1, %d, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
print("ready", flush=True)
for line in sys.stdin:
    n = int(line.split()[1])
    for at in range(0, n, mmap.PAGESIZE):
        region[at] = 1
    print("touched", flush=True)
""" % (COMM, REGION)


# The second child: 200 threads with 8 MiB stacks parked on an event, and a 2 GiB sparse file
# mapped MAP_PRIVATE read-write (charged to Committed_AS, the file's pages until written).
STACKS_COMM = "memdiag-stacks"
THREADS = 200
STACK = 8 * MiB
FILE_MAP = 2 * GiB
STACKS_CHILD = r"""
import ctypes, mmap, os, sys, threading
ctypes.CDLL(None).prctl(15, b"%s", 0, 0, 0)  # PR_SET_NAME
threading.stack_size(%d)
park = threading.Event()
threads = [threading.Thread(target=park.wait, daemon=True) for _ in range(%d)]
for t in threads:
    t.start()
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
os.ftruncate(fd, %d)
file_map = mmap.mmap(fd, %d, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
print("ready", flush=True)
sys.stdin.read()
""" % (STACKS_COMM, STACK, THREADS, FILE_MAP, FILE_MAP)


def overcommit_mode():
    with open("/proc/sys/vm/overcommit_memory") as f:
        return int(f.read())


@unittest.skipUnless(os.geteuid() == 0 and os.path.isdir(V1_MEMORY), "needs root and a v1 memory hierarchy")
class PromiseHoldersTest(unittest.TestCase):
    def setUp(self):
        mode = overcommit_mode()
        if mode == 2:
            # Strict: an 8 GiB promise needs CommitLimit room, which this test cannot assume.
            self.skipTest("vm.overcommit_memory is 2 (strict): an 8 GiB untouched mapping may be refused")
        self.tmp = tempfile.mkdtemp(prefix="memdiag-promise-", dir="/var/tmp")
        self.config = os.path.join(self.tmp, "memdiagd.yaml")
        # Generous for what is touched (256 MiB and the interpreter); the 8 GiB is never touched.
        self.cgroup = V1Cgroup("memdiag-e2e-promise-%d" % os.getpid(), 512 * MiB)
        self.stacks_cgroup = V1Cgroup("memdiag-e2e-stacks-%d" % os.getpid(), 512 * MiB)
        self.child = None
        self.stacks_child = None

    def tearDown(self):
        self.stop_child()
        self.stop_stacks_child()
        self.cgroup.remove()
        self.stacks_cgroup.remove()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def stop_child(self):
        if self.child is not None:
            if self.child.poll() is None:
                self.child.kill()
            self.child.wait()
            self.child.stdin.close()
            self.child.stdout.close()
            self.child = None

    def stop_stacks_child(self):
        if self.stacks_child is not None:
            if self.stacks_child.poll() is None:
                self.stacks_child.kill()
            self.stacks_child.wait()
            self.stacks_child.stdin.close()
            self.stacks_child.stdout.close()
            self.stacks_child = None

    def start_stacks_child(self):
        self.stop_stacks_child()
        self.stacks_child = subprocess.Popen(
            ["sh", "-c", self.stacks_cgroup.shell('exec "$0" -c "$1" "$2"'), sys.executable, STACKS_CHILD,
             os.path.join(self.tmp, "private-map")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, preexec_fn=die_with_parent)
        self.assertEqual(self.stacks_child.stdout.readline().strip(), "ready", "the stacks child did not start")

    def start_child(self):
        self.stop_child()  # a failed subtest's child: the cgroup must hold only the new one
        self.child = subprocess.Popen(["sh", "-c", self.cgroup.shell('exec "$0" -c "$1"'), sys.executable, CHILD],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                      preexec_fn=die_with_parent)
        self.assertEqual(self.child.stdout.readline().strip(), "ready", "child could not map %d bytes" % REGION)

    def touch(self, n):
        self.child.stdin.write("touch %d\n" % n)
        self.child.stdin.flush()
        self.assertEqual(self.child.stdout.readline().strip(), "touched")

    def configure(self, scanner):
        # Only the process source: the others have their own tests and would slow the samples.
        write(self.config, "sampler: {interval: 200ms}\n"
                           "sources:\n"
                           "  cgroup: {enabled: false}\n"
                           "  reclaim_stall: {enabled: false}\n"
                           "  processes: {scanner: %s, top_n: 3}\n" % scanner)

    def test_untouched_region_is_named_then_touching_moves_it_to_resident(self):
        self.assertNotEqual(overcommit_mode(), 2)
        for scanner in ("bpf_iter", "procfs"):
            with self.subTest(scanner=scanner):
                self.configure(scanner)
                with Daemon("--config", self.config) as d:
                    d.wait_ready()
                    try:
                        self.check(d, scanner)
                    finally:
                        self.stop_child()  # a failed subtest's child would count in the next's "before"

    def check(self, d, scanner):
        def scan_time(s):
            return s.get(("memdiag_process_scan_timestamp_seconds", ""))

        def newer_scan(than):
            """The samples of a scrape serving a process scan taken after `than` (a scan time)."""
            def later():
                s = d.samples()
                return s if scan_time(s) is not None and scan_time(s) > than else None
            return wait_until(later, 180, "a process scan newer than %s" % than)

        # Before the child: the node-wide sum as the scan of a node without it sees it (the
        # stacks child is there already: it must add nothing to the sum).
        self.start_stacks_child()
        s = d.samples()
        self.assertEqual(s[("memdiag_process_scan_info", '{mode="%s"}' % scanner)], 1, d.logs())
        before = newer_scan(scan_time(s) or 0)
        node_before = before[("memdiag_processes_unbacked_promise_bytes", "")]

        self.start_child()
        pid = self.child.pid  # the shell exec'd the interpreter: same pid
        who = '{pid="%d",comm="%s"}' % (pid, COMM)
        cg = '{cgroup="%s"}' % self.cgroup.path

        def unbacked(s):
            return s.get(("memdiag_process_unbacked_promise_bytes", who))

        # A /proc scan is paced to 1 % of a CPU: under ASan one costs ~0.5 s, so the next comes
        # ~50 s later. The bound only stops a hung run.
        s = wait_until(lambda: (lambda s: s if (unbacked(s) or 0) >= REGION - SLACK else None)(d.samples()), 180,
                       lambda: "%s's unbacked promise >= 8 GiB - slack" % who)
        self.assertGreaterEqual(s[("memdiag_process_committed_private_bytes", who)], REGION)
        # The top holder: no other selected process holds more unbacked promise. Except
        # reservations of terabytes: a sanitized process (memdiagd itself in the ASan build)
        # maps its ~14 TiB shadow MAP_NORESERVE, which the kernel counts in VmData though it
        # never charges it; the figure cannot tell those apart (see ProcessMaps).
        def committed(labels):
            return s.get(("memdiag_process_committed_private_bytes", labels), 0)
        holders = sorted(((v, labels) for (name, labels), v in s.items()
                          if name == "memdiag_process_unbacked_promise_bytes" and committed(labels) < RESERVATION),
                         reverse=True)
        self.assertEqual(holders[0][1], who, "top holders: %s" % holders[:3])
        self.assertEqual(s[("memdiag_process_info", who[:-1] + ',cgroup="%s"}' % self.cgroup.path)], 1)
        # Its cgroup: the child is all there is in it.
        self.assertEqual(s[("memdiag_cgroup_processes", cg)], 1)
        self.assertEqual(s[("memdiag_cgroup_process_unbacked_promise_bytes", cg)], unbacked(s))
        self.assertEqual(s[("memdiag_cgroup_process_committed_private_bytes", cg)],
                         s[("memdiag_process_committed_private_bytes", who)])
        cgroups = sorted(((v, labels) for (name, labels), v in s.items()
                          if name == "memdiag_cgroup_process_unbacked_promise_bytes" and v < RESERVATION), reverse=True)
        self.assertEqual(cgroups[0][1], cg, "top holding cgroups: %s" % cgroups[:3])
        # The node: risen by about the region. Not in the ASan build: there every sanitized
        # process (the daemon's own loader and canary children, the suite's other tests running
        # beside this one) counts its ~15 TiB shadow reservation, so one starting or ending
        # anywhere moves the node-wide sum by tens of TiB (fresh-ci saw -30 TiB). The per-process
        # and per-cgroup checks above hold in both builds.
        if not built_with_asan(MEMDIAGD):
            rise = s[("memdiag_processes_unbacked_promise_bytes", "")] - node_before
            self.assertGreaterEqual(rise, REGION - NODE_NOISE, "node-wide unbacked promise rose by %d" % rise)
            self.assertLessEqual(rise, REGION + NODE_NOISE, "node-wide unbacked promise rose by %d" % rise)
        self.assertGreaterEqual(s[("memdiag_processes_unbacked_promise_bytes", "")], unbacked(s))

        # The stacks child: committed as much as a holder, promised next to nothing that can
        # come due. Its maps were read: its stacks and its file map are counted as not due.
        stacks_who = '{pid="%d",comm="%s"}' % (self.stacks_child.pid, STACKS_COMM)
        stacks_cg = '{cgroup="%s"}' % self.stacks_cgroup.path
        self.assertLess(s.get(("memdiag_process_unbacked_promise_bytes", stacks_who), 0), 256 * MiB,
                        "the thread stacks and file map were taken for a promise")
        self.assertLess(s.get(("memdiag_cgroup_process_unbacked_promise_bytes", stacks_cg), 0), 256 * MiB)
        self.assertGreaterEqual(s[("memdiag_processes_promise_not_due_bytes", '{kind="thread_stacks"}')],
                                THREADS * (STACK - 64 * 1024))
        self.assertGreaterEqual(s[("memdiag_processes_promise_not_due_bytes", '{kind="private_file_maps"}')],
                                FILE_MAP)
        status, body = http_get(d.port, "/api/v1/diagnosis")
        self.assertEqual(status, 200)
        report = json.loads(body)
        holders = report["promise_holders"]["processes"]
        self.assertEqual(holders[0]["pid"], pid, report["promise_holders"])
        # Listed only for what little it promised beside them (the interpreter's own heap), and
        # with what was left out said.
        for p in holders:
            if p["pid"] == self.stacks_child.pid:
                self.assertLess(p["unbacked_promise_bytes"], 256 * MiB)
                self.assertGreaterEqual(p["thread_stack_bytes"], THREADS * (STACK - 64 * 1024))
                self.assertGreaterEqual(p["private_file_map_bytes"], FILE_MAP)
        self.assertGreaterEqual(report["promise_holders"]["not_due"]["thread_stack_bytes"], THREADS * (STACK - 64 * 1024))

        # Touch 256 MiB: a scan after the touch moves that much from unbacked to resident anon.
        anon = '{pid="%d",comm="%s",type="anon"}' % (pid, COMM)
        was_unbacked, was_anon = unbacked(s), s[("memdiag_process_resident_bytes", anon)]
        self.touch(TOUCHED)
        after = newer_scan(time.time())
        self.assertAlmostEqual(was_unbacked - unbacked(after), TOUCHED, delta=8 * MiB)
        self.assertAlmostEqual(after[("memdiag_process_resident_bytes", anon)] - was_anon, TOUCHED, delta=8 * MiB)
        self.assertEqual(after[("memdiag_process_committed_private_bytes", who)],
                         s[("memdiag_process_committed_private_bytes", who)], "touching promises nothing new")
        self.assertEqual(after[("memdiag_cgroup_process_unbacked_promise_bytes", cg)], unbacked(after))

        self.stop_child()


if __name__ == "__main__":
    unittest.main()
