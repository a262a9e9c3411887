# SPDX-License-Identifier: Apache-2.0
"""The container image the DaemonSet names, built without a registry: the root file system the
Dockerfile describes (Debian bookworm with the .deb of this build tree installed) made from
Debian's packages with mmdebstrap, then the daemon run from it the way the DaemonSet runs it
(the host's /proc and /sys mounted under /host, the ConfigMap's config, the host's pid
namespace) inside a mount namespace of its own (unshare + chroot), and scraped from outside.

What is held: the Dockerfile starts from debian:bookworm-slim and installs the .deb; the .deb's
binary starts in that root with only its Depends installed (so the image has every library it
needs); every source is up; the node it reports is this host (MemTotal equals /proc/meminfo's,
read through /host/proc); the build it reports is this build's version.

mmdebstrap's minbase variant stands in for bookworm-slim (both are Debian's required packages
with apt; slim also drops documentation). The root without the .deb is cached outside the
checkout ($MEMDIAG_CONTAINER_CACHE, default /var/cache/memdiag/container), keyed by the
.deb's Depends: ~1-2 minutes the first time, seconds after. Needs root, mmdebstrap and the
Debian archive."""
import glob
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import yaml

from harness import MEMDIAGD, REPO, free_port, http_get, parse_exposition, require_all, wait_until

BUILD = os.path.dirname(os.path.dirname(MEMDIAGD))
DOCKERFILE = os.path.join(REPO, "Dockerfile")
MANIFEST = os.path.join(REPO, "deploy", "kubernetes", "memdiagd.yaml")
CACHE = os.environ.get("MEMDIAG_CONTAINER_CACHE", "/var/cache/memdiag/container")
SOURCES = ["meminfo", "vmstat", "pressure", "vm_sysctl", "cgroup", "reclaim_stall", "processes", "canary"]


def tool(*args, timeout=60, **kwargs):
    p = subprocess.run(args, capture_output=True, text=True, timeout=timeout, **kwargs)
    return p.returncode, p.stdout, p.stderr


def dockerfile():
    """(base image, the instructions) of the Dockerfile."""
    with open(DOCKERFILE) as f:
        lines = [line.strip() for line in f.read().replace("\\\n", " ").splitlines()]
    instructions = [line for line in lines if line and not line.startswith("#")]
    base = next(line.split()[1] for line in instructions if line.startswith("FROM "))
    return base, instructions


def config_map_config():
    with open(MANIFEST) as f:
        config_map = next(d for d in yaml.safe_load_all(f) if d and d["kind"] == "ConfigMap")
    return config_map["data"]["memdiagd.yaml"]


def depends(deb):
    rc, out, err = tool("dpkg-deb", "-f", deb, "Depends")
    assert rc == 0, err
    return sorted({re.split(r"[ (|]", alt.strip())[0] for alt in out.split(",") if alt.strip()})


def base_root(packages):
    """A tarball of bookworm's minbase with `packages`, made once per package list."""
    key = hashlib.sha256(("\n".join(packages) + open(__file__, "rb").read().decode()).encode()).hexdigest()[:16]
    tarball = os.path.join(CACHE, "bookworm-%s.tar" % key)
    if not os.path.exists(tarball):
        os.makedirs(CACHE, exist_ok=True)
        for old in glob.glob(os.path.join(CACHE, "bookworm-*.tar")):
            os.unlink(old)
        partial = tarball + ".partial"
        rc, out, err = tool("mmdebstrap", "--variant=minbase", "--include=" + ",".join(packages), "--format=tar",
                            "bookworm", partial, timeout=900)
        assert rc == 0, "mmdebstrap failed:\n%s" % err[-3000:]
        os.rename(partial, tarball)
    return tarball


@unittest.skipUnless(os.geteuid() == 0 or require_all(), "needs root (chroot, mounts, mmdebstrap)")
class ContainerImage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        for command in ("mmdebstrap", "cpack", "dpkg-deb", "unshare", "chroot"):
            if not shutil.which(command):
                raise (AssertionError if require_all() else unittest.SkipTest)(
                    "needs %s (deploy/install-deps.sh --test)" % command)
        cls.tmp = tempfile.TemporaryDirectory(prefix="memdiag-image-")
        cls.addClassCleanup(cls.tmp.cleanup)
        rc, out, err = tool("cpack", "-G", "DEB", "--config", os.path.join(BUILD, "CPackConfig.cmake"),
                            "-B", os.path.join(cls.tmp.name, "deb"), cwd=BUILD, timeout=300)
        debs = glob.glob(os.path.join(cls.tmp.name, "deb", "*.deb"))
        assert rc == 0 and len(debs) == 1, "cpack: %s\n%s%s" % (debs, out, err)
        cls.deb = debs[0]
        cls.root = os.path.join(cls.tmp.name, "root")
        os.makedirs(cls.root)
        rc, out, err = tool("tar", "-C", cls.root, "-xf", base_root(depends(cls.deb)), timeout=300)
        assert rc == 0, err
        # The Dockerfile's RUN: the .deb installed with its dependencies (here already present).
        shutil.copy(cls.deb, os.path.join(cls.root, "tmp", "memdiag.deb"))
        rc, out, err = tool("chroot", cls.root, "dpkg", "-i", "/tmp/memdiag.deb", timeout=120)
        assert rc == 0, "dpkg -i in the image's root failed:\n%s%s" % (out, err)
        os.unlink(os.path.join(cls.root, "tmp", "memdiag.deb"))

    def test_dockerfile_is_bookworm_slim_with_the_deb(self):
        base, instructions = dockerfile()
        self.assertEqual(base, "debian:bookworm-slim")
        run = " ".join(i for i in instructions if i.startswith("RUN "))
        self.assertRegex(run, r"apt-get install -y --no-install-recommends /tmp/memdiag\.deb")
        entrypoint = next(i for i in instructions if i.startswith("ENTRYPOINT "))
        self.assertIn('"/usr/bin/memdiagd"', entrypoint)

    def test_the_daemon_runs_from_the_image_root_as_the_daemonset_runs_it(self):
        with open(os.path.join(self.root, "etc", "memdiag", "memdiagd.yaml"), "w") as f:
            f.write(config_map_config())
        for d in ("host/proc", "host/sys"):
            os.makedirs(os.path.join(self.root, d), exist_ok=True)
        port = free_port()
        # The DaemonSet's mounts, in a mount namespace of its own (gone with the process), and
        # the host's pid namespace (hostPID: true).
        script = ("set -e; r=%s; mount --make-rprivate /; "
                  "mount --rbind /proc $r/proc; mount --rbind /sys $r/sys; mount --rbind /dev $r/dev; "
                  "mount --rbind /proc $r/host/proc; mount --rbind /sys $r/host/sys; "
                  "exec chroot $r /usr/bin/memdiagd --config /etc/memdiag/memdiagd.yaml "
                  "--web.listen-address 127.0.0.1:%d" % (self.root, port))
        log = open(os.path.join(self.tmp.name, "memdiagd.log"), "w+")
        daemon = subprocess.Popen(["unshare", "--mount", "sh", "-c", script], stdout=log, stderr=log)

        def stop():
            daemon.terminate()
            try:
                daemon.wait(timeout=10)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait()
        self.addCleanup(stop)

        def healthy():
            if daemon.poll() is not None:
                log.seek(0)
                raise AssertionError("memdiagd exited %s in the image's root:\n%s" % (daemon.returncode, log.read()))
            try:
                return http_get(port, "/healthz")[0] == 200
            except OSError:
                return False
        wait_until(healthy, 60, "the daemon in the image's root to answer /healthz")

        def every_source_up():
            samples = parse_exposition(http_get(port, "/metrics")[1])
            up = {s: samples.get(("memdiag_source_up", '{source="%s"}' % s)) for s in SOURCES}
            return samples if all(v == 1 for v in up.values()) else None
        samples = wait_until(every_source_up, 60, lambda: "every source up: %s" % {
            s: v for (n, s), v in parse_exposition(http_get(port, "/metrics")[1]).items() if n == "memdiag_source_up"})
        with open("/proc/meminfo") as f:
            mem_total_kib = int(re.search(r"^MemTotal:\s+(\d+) kB", f.read(), re.M).group(1))
        self.assertEqual(samples[("memdiag_meminfo_mem_total_bytes", "")], mem_total_kib * 1024,
                         "the daemon did not read this host's /proc through /host/proc")
        build = [labels for (name, labels) in samples if name == "memdiag_build_info"]
        with open(os.path.join(REPO, "CMakeLists.txt")) as f:
            version = re.search(r"project\(memdiag VERSION (\S+)", f.read()).group(1)
        self.assertEqual(len(build), 1)
        self.assertIn('version="%s"' % version, build[0])


if __name__ == "__main__":
    unittest.main()
