# SPDX-License-Identifier: Apache-2.0
"""The .deb that `cpack -G DEB` makes from the build tree of the daemon under test
(deploy/packaging.cmake): exactly the files it should hold, Debian's fields, the example config
as a conffile, and a real installation by dpkg into a scratch root, whose unit verifies and
whose binary runs on the installed config, then its removal and purge. The maintainer scripts'
systemctl calls are checked against a stand-in systemctl, with and without systemd running."""
import glob
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from harness import MEMDIAGD, REPO

BUILD = os.path.dirname(os.path.dirname(MEMDIAGD))  # build/bin/memdiagd -> build/
DEPLOY = os.path.join(REPO, "deploy")
UNIT = "/lib/systemd/system/memdiagd.service"
CONFIG = "/etc/memdiag/memdiagd.yaml"


def tool(*args, **kwargs):
    p = subprocess.run(args, capture_output=True, text=True, timeout=60, **kwargs)
    return p.returncode, p.stdout, p.stderr


def expected_files():
    files = {"/usr/bin/memdiagd", UNIT, CONFIG, "/usr/share/doc/memdiag/README.md",
             "/usr/share/doc/memdiag/copyright", "/usr/share/doc/memdiag/changelog.gz",
             "/usr/share/man/man8/memdiagd.8.gz"}
    files |= {"/usr/share/doc/memdiag/" + os.path.relpath(p, REPO)
              for p in glob.glob(os.path.join(REPO, "docs", "**", "*.md"), recursive=True)
              + glob.glob(os.path.join(REPO, "docs", "**", "*.png"), recursive=True)}
    for pattern, into in (("prometheus/*.yml", "/usr/share/memdiag/prometheus/"),
                          ("grafana/*.json", "/usr/share/memdiag/grafana/")):
        files |= {into + os.path.basename(p) for p in glob.glob(os.path.join(DEPLOY, pattern))}
    return files


def project_version():
    with open(os.path.join(REPO, "CMakeLists.txt")) as f:
        return re.search(r"project\(memdiag VERSION (\S+)", f.read()).group(1)


def dpkg_in(root, *args):
    """dpkg on the scratch root. Its maintainer scripts run outside it (the root has no
    /bin/sh to chroot into) with DPKG_ROOT set, which they honour."""
    return tool("dpkg", "--root=" + root, "--log=" + os.path.join(root, "dpkg.log"), "--force-depends",
                "--force-not-root", "--force-script-chrootless", *args)


def scratch_root(parent):
    root = os.path.join(parent, "root")
    for d in ("info", "updates"):
        os.makedirs(os.path.join(root, "var/lib/dpkg", d))
    open(os.path.join(root, "var/lib/dpkg/status"), "w").close()
    return root


@unittest.skipUnless(shutil.which("cpack") and shutil.which("dpkg-deb"), "needs cpack and dpkg-deb")
class Package(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="memdiag-deb-")
        cls.addClassCleanup(cls.tmp.cleanup)
        cpack_config = os.path.join(BUILD, "CPackConfig.cmake")
        assert os.path.exists(cpack_config), "%s is missing: configure %s again" % (cpack_config, BUILD)
        rc, out, err = tool("cpack", "-G", "DEB", "--config", cpack_config, "-B", cls.tmp.name, cwd=BUILD)
        debs = glob.glob(os.path.join(cls.tmp.name, "*.deb"))
        assert rc == 0 and len(debs) == 1, "cpack: %s\n%s%s" % (debs, out, err)
        cls.deb = debs[0]
        cls.control = os.path.join(cls.tmp.name, "control")
        subprocess.run(["dpkg-deb", "-e", cls.deb, cls.control], check=True, timeout=60)

    def field(self, name):
        rc, out, err = tool("dpkg-deb", "-f", self.deb, name)
        self.assertEqual(rc, 0, err)
        return out.strip()

    def test_it_holds_exactly_the_daemon_unit_config_rules_dashboards_and_readme(self):
        rc, out, err = tool("dpkg-deb", "-c", self.deb)
        self.assertEqual(rc, 0, err)
        entries = [line.split(None, 5) for line in out.splitlines()]
        files = {e[5][1:] for e in entries if not e[5].endswith("/")}
        dirs = {e[5][1:].rstrip("/") for e in entries if e[5].endswith("/")}
        expected = expected_files()
        self.assertGreaterEqual(len([f for f in expected if "/grafana/" in f]), 1)
        self.assertEqual(sorted(expected - files), [], "missing from the package")
        self.assertEqual(sorted(files - expected), [], "in the package but not meant to be")
        parents = {os.path.dirname(f) for f in expected}
        ancestors = {p[:i] for p in parents for i in range(1, len(p) + 1) if (p + "/")[i] == "/"}
        self.assertEqual(sorted(dirs - ancestors - {""}), [], "directories holding nothing of ours")
        modes = {e[5][1:]: e[0] for e in entries}
        self.assertEqual(modes["/usr/bin/memdiagd"], "-rwxr-xr-x")
        self.assertEqual({modes[f] for f in expected - {"/usr/bin/memdiagd"}}, {"-rw-r--r--"})

    def test_control_fields(self):
        self.assertEqual(self.field("Package"), "memdiag")
        self.assertEqual(self.field("Version"), project_version())
        self.assertEqual(self.field("Architecture"), tool("dpkg", "--print-architecture")[1].strip())
        self.assertEqual(self.field("Section"), "admin")
        self.assertRegex(self.field("Maintainer"), r"\S+ <\S+@\S+>")
        self.assertRegex(self.field("Depends"), r"(^|, )libc6( |,|$)")
        self.assertTrue(self.field("Description"))

    def test_the_config_is_a_conffile_and_the_scripts_are_executable(self):
        with open(os.path.join(self.control, "conffiles")) as f:
            self.assertEqual(f.read().split(), [CONFIG])
        for script in ("postinst", "prerm", "postrm"):
            self.assertEqual(os.stat(os.path.join(self.control, script)).st_mode & 0o777, 0o755, script)

    def run_script(self, script, *args, systemd_running, dpkg_root=None):
        """The script as shipped, with its "is systemd running" test pointed at a directory
        this test makes or not; returns the systemctl command lines it ran."""
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(self.control, script)) as f:
                text = f.read()
            self.assertIn("/run/systemd/system", text)
            running = os.path.join(tmp, "run-systemd-system")
            if systemd_running:
                os.mkdir(running)
            path = os.path.join(tmp, script)
            with open(path, "w") as f:
                f.write(text.replace("/run/systemd/system", running))
            log = os.path.join(tmp, "systemctl.log")
            os.mkdir(os.path.join(tmp, "bin"))
            with open(os.path.join(tmp, "bin", "systemctl"), "w") as f:
                f.write('#!/bin/sh\necho "$*" >> %s\n' % log)
            os.chmod(os.path.join(tmp, "bin", "systemctl"), 0o755)
            env = {k: v for k, v in os.environ.items() if k != "DPKG_ROOT"}
            env["PATH"] = os.path.join(tmp, "bin") + ":" + env["PATH"]
            if dpkg_root:
                env["DPKG_ROOT"] = dpkg_root
            rc, out, err = tool("sh", "-e", path, *args, env=env)
            self.assertEqual(rc, 0, err)
            if not os.path.exists(log):
                return []
            with open(log) as f:
                return f.read().splitlines()

    def test_scripts_reload_systemd_and_stop_on_remove_but_never_enable_or_start(self):
        reload = ["--system daemon-reload"]
        cases = [
            (("postinst", "configure", ""), True, None, reload),
            (("postinst", "configure", "0.0.9"), True, None, reload + ["try-restart memdiagd.service"]),
            (("postinst", "configure", ""), False, None, []),
            (("postinst", "configure", ""), True, "/srv/chroot", []),
            (("prerm", "remove"), True, None, ["stop memdiagd.service"]),
            (("prerm", "upgrade", "0.1.1"), True, None, []),
            (("prerm", "remove"), False, None, []),
            (("postrm", "remove"), True, None, reload),
            (("postrm", "upgrade", "0.1.1"), True, None, []),
            (("postrm", "purge"), False, None, []),
        ]
        for args, running, dpkg_root, calls in cases:
            with self.subTest(args=args, systemd_running=running, dpkg_root=dpkg_root):
                self.assertEqual(self.run_script(*args, systemd_running=running, dpkg_root=dpkg_root), calls)

    def test_installed_by_dpkg_it_runs_and_its_unit_names_the_installed_paths(self):
        root = scratch_root(self.tmp.name)
        rc, out, err = dpkg_in(root, "-i", self.deb)
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(tool("dpkg", "--root=" + root, "-s", "memdiag")[1].splitlines()[1],
                         "Status: install ok installed")
        for path in expected_files():
            self.assertTrue(os.path.isfile(root + path), path)

        with open(root + UNIT) as f:
            unit = f.read()
        with open(os.path.join(DEPLOY, "systemd", "memdiagd.service")) as f:
            source = f.read()
        moved = re.sub(r"^Documentation=.*$", "Documentation=man:memdiagd(8) file:///usr/share/doc/memdiag/README.md",
                       source[source.index("[Unit]"):].replace("/usr/local/bin/", "/usr/bin/"), flags=re.M)
        self.assertEqual(unit[unit.index("[Unit]"):], moved,
                         "the packaged unit is not deploy/systemd/memdiagd.service moved to /usr (build again?)")
        self.assertEqual(re.findall(r"^ExecStart=(.*)$", unit, re.M), ["/usr/bin/memdiagd --config " + CONFIG])
        docs = re.findall(r"^Documentation=(.*)$", unit, re.M)
        self.assertEqual(docs, ["man:memdiagd(8) file:///usr/share/doc/memdiag/README.md"])
        # The man page is the daemon's --help, and names every flag --help names.
        rc, page, err = tool("sh", "-c", "gzip -dc %s | MANWIDTH=100 man -l - 2>/dev/null || gzip -dc %s"
                             % (root + "/usr/share/man/man8/memdiagd.8.gz", root + "/usr/share/man/man8/memdiagd.8.gz"))
        self.assertEqual(rc, 0, err)
        rc, help_text, err = tool(root + "/usr/bin/memdiagd", "--help")
        for flag in sorted(set(re.findall(r"^  (--[a-z.-]+)", help_text, re.M))):
            self.assertIn(flag.replace("-", "\\-") if "\\-" in page else flag, page, "the man page lacks " + flag)
        with open(root + "/usr/share/doc/memdiag/copyright") as f:
            self.assertIn("License: Apache-2.0", f.read())
        self.assertNotIn("/usr/local", unit)

        binary = root + "/usr/bin/memdiagd"
        rc, out, err = tool("readelf", "-S", "--wide", binary)
        self.assertEqual(rc, 0, err)
        self.assertNotIn(".debug_info", out, "the packaged binary is not stripped")
        rc, out, err = tool(binary, "--version")
        self.assertEqual(rc, 0, err)
        self.assertIn(project_version(), out + err)
        rc, out, err = tool(binary, "--check-config", "--config", root + CONFIG)
        self.assertEqual(rc, 0, out + err)

        if shutil.which("systemd-analyze"):
            # As tests/e2e/test_deploy.py does: the unit with its paths moved into the scratch
            # root, since verify checks that ExecStart's binary exists.
            verified = os.path.join(self.tmp.name, "memdiagd.service")
            with open(verified, "w") as f:
                f.write(unit.replace("/usr/bin/memdiagd", binary).replace(CONFIG, root + CONFIG))
            # Its Documentation= names man:memdiagd(8), which verify looks up: in the scratch root.
            rc, out, err = tool("systemd-analyze", "verify", verified,
                                env=dict(os.environ, MANPATH=root + "/usr/share/man"))
            self.assertEqual((rc, out + err), (0, ""))

        # Removal keeps the config (and an enabled unit's links); purge deletes both.
        rc, out, err = dpkg_in(root, "-r", "memdiag")
        self.assertEqual(rc, 0, out + err)
        self.assertFalse(os.path.exists(binary))
        self.assertTrue(os.path.isfile(root + CONFIG))
        wants = root + "/etc/systemd/system/multi-user.target.wants/memdiagd.service"
        os.makedirs(os.path.dirname(wants))
        os.symlink(UNIT, wants)
        rc, out, err = dpkg_in(root, "-P", "memdiag")
        self.assertEqual(rc, 0, out + err)
        self.assertFalse(os.path.exists(root + CONFIG))
        self.assertFalse(os.path.lexists(wants))


if __name__ == "__main__":
    unittest.main()
