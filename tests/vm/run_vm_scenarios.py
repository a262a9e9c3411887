#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The VM stage: the .deb CPack makes from a build tree, installed into a Debian guest under
systemd on cgroup v2, on each of Debian's kernels the guest image carries (6.1 and 6.12), with
the scenarios of tests/vm/guest/scenarios run inside (tests/vm/run_guest.py boots each guest).

    run_vm_scenarios.py BUILD_DIR [--kernel VERSION ...] [--scenario NAME ...] [--out DIR]

Fails when a scenario fails, errs or did not report (a guest that hung, a scenario that never
ran), and prints a table per kernel: each scenario, its checks, and the guest's time."""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run_guest  # noqa: E402

# Debian's kernels this stage boots, by the prefix of their version (IMAGE.boot/vmlinuz-VERSION).
KERNEL_SERIES = ("6.1.", "6.12.")


def debian_kernels(boot):
    found = []
    for series in KERNEL_SERIES:
        versions = sorted(os.path.basename(p)[len("vmlinuz-"):] for p in glob.glob(os.path.join(boot, "vmlinuz-" + series + "*")))
        versions = [v for v in versions if os.path.exists(os.path.join(boot, "initrd.img-" + v))]
        if versions:
            found.append(versions[-1])
    return found


def build_deb(build_dir, into):
    subprocess.run(["cpack", "-G", "DEB", "--config", os.path.join(build_dir, "CPackConfig.cmake"), "-B", into],
                   cwd=build_dir, check=True, stdout=subprocess.DEVNULL)
    debs = glob.glob(os.path.join(into, "*.deb"))
    if len(debs) != 1:
        raise SystemExit("run_vm_scenarios: cpack made %s" % debs)
    return debs[0]


def deb_depends(deb):
    """The package names the .deb depends on (versions and alternatives dropped: the guest
    image installs the archive's current ones)."""
    field = subprocess.run(["dpkg-deb", "-f", deb, "Depends"], capture_output=True, text=True, check=True).stdout
    return sorted({re.split(r"[ (|]", part.strip())[0] for part in field.split(",") if part.strip()})


def scenarios_available():
    return sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(HERE, "guest", "scenarios", "*.py")))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build_dir")
    parser.add_argument("--kernel", action="append", help="a kernel version the image carries (default: its 6.1 and 6.12)")
    parser.add_argument("--scenario", action="append", help="default: every one")
    parser.add_argument("--out", default=None, help="where each guest's results go (default: BUILD_DIR/vm-results)")
    parser.add_argument("--timeout", type=int, default=420, help="seconds a guest may take")
    args = parser.parse_args()

    scenarios = args.scenario or scenarios_available()
    # The others need the daemon installed and running: install goes first, always.
    scenarios = ["install"] + [s for s in scenarios if s != "install"]
    out_root = os.path.abspath(args.out or os.path.join(args.build_dir, "vm-results"))
    shutil.rmtree(out_root, ignore_errors=True)
    os.makedirs(out_root)

    with tempfile.TemporaryDirectory(prefix="memdiag-vm-data-") as data:
        deb = build_deb(os.path.abspath(args.build_dir), data)
        os.rename(deb, os.path.join(data, "memdiag.deb"))
        depends = deb_depends(os.path.join(data, "memdiag.deb"))
        started = time.monotonic()
        image = subprocess.run([os.path.join(HERE, "build-guest-image.sh")] + depends, check=True,
                               capture_output=True, text=True).stdout.strip()
        print("guest image %s (%.0f s)" % (image, time.monotonic() - started), flush=True)
        boot = image[:-len(".img")] + ".boot"
        kernels = args.kernel or debian_kernels(boot)
        if len(kernels) < (len(args.kernel) if args.kernel else len(KERNEL_SERIES)):
            raise SystemExit("run_vm_scenarios: the guest image has kernels %s, not one of each of %s"
                             % (os.listdir(boot), KERNEL_SERIES))
        shutil.copytree(os.path.join(HERE, "guest"), os.path.join(data, "guest"))
        with open(os.path.join(HERE, "run.sh.in")) as f:
            run_sh = f.read().replace("@SCENARIOS@", " ".join(scenarios))
        with open(os.path.join(data, "run.sh"), "w") as f:
            f.write(run_sh)

        failed = []
        for kernel in kernels:
            out = os.path.join(out_root, kernel)
            rc = run_guest.run(kernel, image, data, out, args.timeout, boot=boot)
            with open(os.path.join(out, "seconds")) as f:
                seconds = float(f.read())
            results_path = os.path.join(out, "out", "results.json")
            results = {}
            if os.path.exists(results_path):
                with open(results_path) as f:
                    results = json.load(f).get("scenarios", {})
            print("\n== kernel %s: guest %.0f s, run.sh exit %d" % (kernel, seconds, rc))
            for name in scenarios:
                r = results.get(name)
                status = r["status"] if r else "did not report"
                print("  %-28s %s%s" % (name, status, " (%.0f s)" % r["seconds"] if r else ""))
                for c in (r or {}).get("checks", []):
                    print("      %s %s%s" % ("ok  " if c["ok"] else "FAIL", c["check"],
                                             "" if c["ok"] or c["seen"] is None else ": seen %s" % c["seen"]))
                if r and r.get("error"):
                    print("      " + r["error"].strip().replace("\n", "\n      "))
                if status != "pass":
                    failed.append((kernel, name, status))
        print()
        if failed:
            print("run_vm_scenarios: %d failed: %s" % (len(failed), failed))
            print("  results, consoles and journals: %s" % out_root)
            return 1
        print("run_vm_scenarios: every scenario passed on %s" % ", ".join(kernels))
        return 0


if __name__ == "__main__":
    sys.exit(main())
