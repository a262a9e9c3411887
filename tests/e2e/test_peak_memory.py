# SPDX-License-Identifier: Apache-2.0
"""The eBPF sources add nothing to the daemon's peak memory but their maps' descriptors and
bookkeeping: libbpf's parse of the kernel's BTF happens in the loader's
child process (probes/bpf/bpf_loader_child.hpp), never in the daemon, so the peak cannot
silently grow back (a load moved back in-process, a load retried while the last one's BTF is
still held, module BTFs parsed as well).

Two daemons, one after the other, with the same sources except the two eBPF ones (canary off:
its working set would be the peak of both); the difference of their VmHWM once the eBPF
sources are up is what loading and running them cost the daemon at its highest. libbpf 1.1
reads the vmlinux BTF file into one buffer and copies it into another before indexing its
types, so a load in the daemon would add ~2x the file's size (~11 MiB here, measured before
the loads moved out); in the child they add ~0.6 MiB. The bound is 2 MiB, under half of one
copy of any kernel's BTF that CO-RE can use. A difference of two processes' peaks on the same
machine is stable: neither depends on timing, and other processes' memory does not enter either.
"""
import os
import tempfile
import unittest

from harness import MEMDIAGD, Daemon, wait_for
from test_cgroup_churn import built_with_asan

KERNEL_BTF = "/sys/kernel/btf/vmlinux"
MIB = 1024 * 1024


def vm_hwm_bytes(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM for %d" % pid)


def up(d, source):
    return d.samples().get(("memdiag_source_up", '{source="%s"}' % source)) == 1


@unittest.skipUnless(os.geteuid() == 0 and os.path.exists(KERNEL_BTF), "needs root and kernel BTF")
class PeakMemoryTest(unittest.TestCase):
    def peak(self, bpf_on):
        fd, path = tempfile.mkstemp(prefix="memdiagd-peak-", suffix=".yaml")
        with os.fdopen(fd, "w") as f:
            on = "true" if bpf_on else "false"
            f.write("sources:\n  canary: {enabled: false}\n"
                    "  reclaim_stall: {enabled: %s}\n  processes: {enabled: %s}\n" % (on, on))
        self.addCleanup(os.unlink, path)
        with Daemon("--config", path) as d:
            d.wait_ready(timeout=30)
            if bpf_on:
                self.assertTrue(wait_for(lambda: up(d, "reclaim_stall") and up(d, "processes"), timeout=60),
                                "eBPF sources not up: " + d.logs())
            else:  # wait_ready waited for a sample: every other source has run, as in the other daemon
                self.assertEqual(d.samples()[("memdiag_source_up", '{source="meminfo"}')], 1)
            return vm_hwm_bytes(d.proc.pid)

    def test_ebpf_sources_do_not_parse_btf_in_the_daemon(self):
        if built_with_asan(MEMDIAGD):
            self.skipTest("ASan build: its shadow memory and quarantine make VmHWM say nothing about libbpf")
        without = self.peak(bpf_on=False)
        with_bpf = self.peak(bpf_on=True)
        btf_size = os.path.getsize(KERNEL_BTF)
        bound = 2 * MIB
        self.assertGreater(btf_size, 2 * bound, "a BTF this small would not show a parse in the daemon")
        print("\nVmHWM without eBPF %.1f MiB, with %.1f MiB: +%.1f MiB (bound %.1f MiB; vmlinux BTF %.1f MiB)" %
              (without / MIB, with_bpf / MIB, (with_bpf - without) / MIB, bound / MIB, btf_size / MIB))
        self.assertLess(with_bpf - without, bound)


if __name__ == "__main__":
    unittest.main()
