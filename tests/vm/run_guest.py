#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Boots one Debian guest under qemu (TCG: no KVM needed) on a given kernel and runs a data
disk's run.sh inside it (tests/vm/guest-runner.sh, started by systemd at boot), then brings back
what it wrote (out/: run.log, run.rc, the journal) and the serial console.

    run_guest.py --kernel VERSION --image ROOT.img --data DIR --out DIR [--timeout S]

The root image is never written: the guest runs on a copy-on-write overlay. The data disk is an
ext4 image made from DIR (mkfs.ext4 -d) and read back with debugfs, so nothing is mounted on the
host. A guest that does not power off within the timeout is killed, and its console's end is
printed. Exit status: run.sh's, or 124 for a timeout, 125 when the guest gave nothing back."""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time


def guest_command(kernel, initrd, overlay, data, memory_mib, cpus):
    # q35 with -cpu max: on the default i440FX, Debian's 6.1 panics under TCG ("IO-APIC + timer
    # doesn't work").
    append = ("root=/dev/vda rw console=ttyS0 panic=-1 no_timer_check net.ifnames=0 "
              "systemd.unified_cgroup_hierarchy=1 systemd.show_status=0")
    return ["qemu-system-x86_64", "-machine", "q35,accel=tcg", "-cpu", "max", "-m", str(memory_mib),
            "-smp", str(cpus), "-kernel", kernel, "-initrd", initrd, "-append", append,
            "-drive", "file=%s,if=virtio,format=qcow2" % overlay,
            "-drive", "file=%s,if=virtio,format=raw" % data,
            "-nographic", "-no-reboot", "-nic", "none"]


def run(kernel_version, image, data_dir, out_dir, timeout, memory_mib=2048, cpus=2, boot="/boot"):
    kernel = os.path.join(boot, "vmlinuz-" + kernel_version)
    initrd = os.path.join(boot, "initrd.img-" + kernel_version)
    for path in (kernel, initrd, image):
        if not os.path.exists(path):
            raise SystemExit("run_guest: %s is missing" % path)
    os.makedirs(out_dir, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="memdiag-vm-") as tmp:
        overlay = os.path.join(tmp, "root.qcow2")
        subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-b", os.path.abspath(image), "-F", "raw",
                        overlay], check=True)
        data = os.path.join(tmp, "data.img")
        with open(data, "wb") as f:
            f.truncate(1 << 30)
        subprocess.run(["mkfs.ext4", "-q", "-L", "memdiag-data", "-d", data_dir, data], check=True)
        console_path = os.path.join(out_dir, "console.log")
        started = time.monotonic()
        with open(console_path, "wb") as console:
            guest = subprocess.Popen(guest_command(kernel, initrd, overlay, data, memory_mib, cpus),
                                     stdin=subprocess.DEVNULL, stdout=console, stderr=subprocess.STDOUT)
            try:
                guest.wait(timeout=timeout)
                timed_out = False
            except subprocess.TimeoutExpired:
                guest.kill()
                guest.wait()
                timed_out = True
        seconds = time.monotonic() - started
        # debugfs reads the image without mounting it; rdump copies out/ whole.
        subprocess.run(["debugfs", "-R", "rdump /out %s" % out_dir, data], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    with open(os.path.join(out_dir, "seconds"), "w") as f:
        f.write("%.1f\n" % seconds)
    rc_path = os.path.join(out_dir, "out", "run.rc")
    if timed_out:
        print("run_guest: %s did not power off within %d s; its console ends:" % (kernel_version, timeout))
        print(tail(console_path))
        return 124
    if not os.path.exists(rc_path):
        print("run_guest: %s gave nothing back (%.0f s); its console ends:" % (kernel_version, seconds))
        print(tail(console_path))
        return 125
    with open(rc_path) as f:
        return int(f.read().strip() or 125)


def tail(path, lines=40):
    with open(path, "rb") as f:
        text = f.read().decode("utf-8", "replace")
    return "\n".join(text.splitlines()[-lines:])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernel", required=True, help="a version with /boot/vmlinuz-V and /boot/initrd.img-V")
    parser.add_argument("--image", required=True)
    parser.add_argument("--data", required=True, help="a directory with run.sh")
    parser.add_argument("--out", required=True)
    parser.add_argument("--timeout", type=int, default=420)
    args = parser.parse_args()
    sys.exit(run(args.kernel, args.image, args.data, args.out, args.timeout))


if __name__ == "__main__":
    main()
