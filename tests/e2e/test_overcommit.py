# SPDX-License-Identifier: Apache-2.0
"""A real unbacked promise, seen by the real daemon over HTTP (the overcommit-risk
model): a process in a memory cgroup of its own maps an 8 GiB private writable region and
does not touch it. The kernel charges it to Committed_AS at once (modes 0 and 1 allow it on
this 24 GiB machine), nothing backs it, so memdiag_overcommit_unbacked_bytes rises by about
8 GiB; then the process touches 2 GiB of it, and those bytes move from unbacked to resident
(AnonPages rises by as much, unbacked falls by as much).

The holder's cgroup is limited to 3 GiB, so of its 8 GiB promise only what the limit still lets
it draw can come due on the node: about 5 GiB is capped_by_limits, and the risk level is judged
on the charged rest (memdiag_overcommit_charged_unbacked_bytes), about 3 GiB of it.

Other processes on the machine commit and free memory meanwhile: the bounds are +-1.5 GiB on
the 8 GiB and +-0.75 GiB on the 2 GiB, well outside what the rest of the suite moves and well
inside what a wrong formula (Shmem or swap left out, touched bytes counted twice) would give.
"""
import os
import subprocess
import tempfile
import unittest

from harness import Daemon, V1Cgroup, V1_MEMORY, die_with_parent, wait_until, wait_for_samples

GIB = 1 << 30
MAPPED = 8 * GIB
TOUCHED = 2 * GIB
LIMIT = 3 * GIB
THRESHOLDS = (0.1, 100, 200, 300)  # diagnosis.overcommit.unbacked_to_supply for this test

# The holder: maps, says so, waits; touches, says so, waits. Python's mmap of -1 is
# MAP_ANONYMOUS, and MAP_PRIVATE without MAP_NORESERVE is charged to Committed_AS at mmap().
HOLDER = r"""
import mmap, sys
m = mmap.mmap(-1, %d, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, prot=mmap.PROT_READ | mmap.PROT_WRITE)
print("mapped", flush=True)
sys.stdin.readline()
for offset in range(0, %d, 4096):
    m[offset] = 1
print("touched", flush=True)
sys.stdin.readline()
""" % (MAPPED, TOUCHED)


def overcommit_mode():
    with open("/proc/sys/vm/overcommit_memory") as f:
        return int(f.read())


def figure(samples, name):
    return samples[(name, "")]


@unittest.skipUnless(os.geteuid() == 0 and os.path.isdir(V1_MEMORY), "needs root and a v1 memory hierarchy")
class UnbackedPromiseTest(unittest.TestCase):
    def setUp(self):
        if overcommit_mode() == 2:
            self.skipTest("vm.overcommit_memory=2 would refuse an 8 GiB promise this test needs")
        # Touched memory stays inside a limit; the untouched mapping is not charged to a cgroup.
        self.cgroup = V1Cgroup("memdiag-e2e-overcommit-%d" % os.getpid(), LIMIT)
        self.addCleanup(self.cgroup.remove)

    def start_holder(self):
        holder = subprocess.Popen(["sh", "-c", self.cgroup.shell("exec python3 -c '%s'" % HOLDER.replace("'", "'\\''"))],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, preexec_fn=die_with_parent)

        def stop():
            holder.kill()
            holder.wait()
            holder.stdin.close()
            holder.stdout.close()
        self.addCleanup(stop)
        return holder

    def settled(self, d):
        """Samples of a scrape taken after two more samples: whatever was done before is in it."""
        return wait_for_samples(d, count=2)

    def test_an_untouched_mapping_is_unbacked_until_it_is_touched(self):
        # Thresholds from the config (diagnosis.overcommit), low at 0.1: the 3 GiB of the promise
        # that the cgroup's limit lets come due, over this machine's ~22 GiB of supply, crosses it;
        # the level must be what the thresholds and the exported ratio make of it.
        fd, config = tempfile.mkstemp(prefix="memdiagd-overcommit-", suffix=".yaml")
        with os.fdopen(fd, "w") as f:
            f.write("diagnosis:\n  overcommit: {unbacked_to_supply: %s}\n" % list(THRESHOLDS))
        self.addCleanup(os.unlink, config)
        with Daemon("--config", config) as d:
            d.wait_ready()
            before = self.settled(d)
            self.assertEqual(before[("memdiag_overcommit_mode_info", '{mode="%s",assumed="false"}' %
                                     ("heuristic", "always")[overcommit_mode()])], 1)

            holder = self.start_holder()
            self.assertEqual(holder.stdout.readline().strip(), "mapped")
            mapped = self.settled(d)
            rise = figure(mapped, "memdiag_overcommit_unbacked_bytes") - figure(before, "memdiag_overcommit_unbacked_bytes")
            committed = (figure(mapped, "memdiag_meminfo_committed_as_bytes") -
                         figure(before, "memdiag_meminfo_committed_as_bytes"))
            print("\nmapping 8 GiB: Committed_AS +%.2f GiB, unbacked +%.2f GiB" % (committed / GIB, rise / GIB))
            # Tests running beside this one commit and free memory too (under ASan once +1.5 GiB
            # more in this interval, once 0.27 GiB less): the mapping must be charged, and what was
            # charged must be unbacked.
            self.assertGreater(committed, MAPPED - 1.5 * GIB, "Committed_AS rose by %.2f GiB" % (committed / GIB))
            self.assertLess(abs(rise - committed), 0.75 * GIB,
                            "unbacked rose by %.2f GiB, Committed_AS by %.2f GiB" % (rise / GIB, committed / GIB))
            # The limit caps all but what the cgroup can still draw: the capped part rose by about
            # 8 - 3 GiB (the process scan runs every sample with the eBPF iterator; /proc may lag).
            capped = wait_until(lambda: (lambda s: s if figure(s, "memdiag_overcommit_capped_by_limits_bytes") -
                                         figure(before, "memdiag_overcommit_capped_by_limits_bytes") >
                                         MAPPED - LIMIT - 0.75 * GIB else None)(wait_for_samples(d, count=1)),
                                120, "the promise beyond the 3 GiB limit to be capped")
            capped_rise = (figure(capped, "memdiag_overcommit_capped_by_limits_bytes") -
                           figure(before, "memdiag_overcommit_capped_by_limits_bytes"))
            self.assertLess(abs(capped_rise - (MAPPED - LIMIT)), 0.75 * GIB, "capped rose by %.2f GiB" % (capped_rise / GIB))
            mapped = capped
            charged = figure(mapped, "memdiag_overcommit_charged_unbacked_bytes")
            self.assertEqual(charged, max(0, figure(mapped, "memdiag_overcommit_unbacked_bytes") -
                                          figure(mapped, "memdiag_overcommit_cow_shared_bytes") -
                                          figure(mapped, "memdiag_overcommit_capped_by_limits_bytes")))
            ratio = figure(mapped, "memdiag_overcommit_unbacked_to_supply_ratio")
            self.assertAlmostEqual(ratio, charged / figure(mapped, "memdiag_overcommit_supply_bytes"), places=9)
            level = sum(1 for t in THRESHOLDS if ratio >= t)
            print("charged unbacked over supply %.3f: risk level %d" %
                  (ratio, figure(mapped, "memdiag_overcommit_risk_level")))
            self.assertGreaterEqual(level, 1, "the 3 GiB that can come due did not reach the configured 0.1")
            self.assertEqual(figure(mapped, "memdiag_overcommit_risk_level"), level)
            self.assertEqual(mapped[("memdiag_overcommit_risk_reason", '{reason="unbacked_promises"}')], 1)

            holder.stdin.write("touch\n")
            holder.stdin.flush()
            self.assertEqual(holder.stdout.readline().strip(), "touched")
            touched = self.settled(d)
            fall = figure(mapped, "memdiag_overcommit_unbacked_bytes") - figure(touched, "memdiag_overcommit_unbacked_bytes")
            anon = figure(touched, "memdiag_meminfo_anon_pages_bytes") - figure(mapped, "memdiag_meminfo_anon_pages_bytes")
            # Touching changes no promise, so whatever Committed_AS did meanwhile is other
            # processes' doing (tests running beside this one start daemons): the touched part
            # is the fall of the unbacked promise plus that. Seen under ASan: unbacked -0.86 GiB
            # while another process committed +1.1 GiB it had not touched.
            others = (figure(touched, "memdiag_meminfo_committed_as_bytes") -
                      figure(mapped, "memdiag_meminfo_committed_as_bytes"))
            print("touching 2 GiB of it: unbacked -%.2f GiB, AnonPages +%.2f GiB, Committed_AS %+.2f GiB" %
                  (fall / GIB, anon / GIB, others / GIB))
            self.assertLess(abs(fall + others - TOUCHED), 0.75 * GIB,
                            "unbacked fell by %.2f GiB, Committed_AS moved %+.2f GiB" % (fall / GIB, others / GIB))
            self.assertLess(abs(anon - TOUCHED), 0.75 * GIB, "AnonPages rose by %.2f GiB" % (anon / GIB))

            holder.kill()
            holder.wait()
            gone = wait_until(lambda: (lambda s: s if figure(mapped, "memdiag_overcommit_unbacked_bytes") -
                                       figure(s, "memdiag_overcommit_unbacked_bytes") > MAPPED - 1.5 * GIB else None)(
                                           wait_for_samples(d, count=1)),
                              60, "the promise to go with its process")
            self.assertLess(abs(figure(gone, "memdiag_overcommit_unbacked_bytes") -
                                figure(before, "memdiag_overcommit_unbacked_bytes")), 1.5 * GIB)


if __name__ == "__main__":
    unittest.main()
