# SPDX-License-Identifier: Apache-2.0
"""The systemd unit's sandbox and the daemon's least privilege, checked against the real daemon.

There is no systemd as PID 1 here to run the unit under (test_systemd_notify.py says more), so
each directive is held against what the daemon does, seen from outside:
- exposure: `systemd-analyze security --offline=true` rates the unit at most 2.0;
- SystemCallFilter, RestrictAddressFamilies, ReadWritePaths, MemoryDenyWriteExecute: strace
  follows the daemon and every child it runs (the BPF loaders, the canary) through samples with
  every source, scrapes of each endpoint, a reload and a stop: every system call is one the
  unit's filter lets through (its groups expanded by systemd-analyze itself), every socket is
  of a family it allows, every file opened for writing is under a path it leaves writable, and
  no mapping is ever writable and executable at once;
- CapabilityBoundingSet, NoNewPrivileges: the daemon started with exactly the unit's bounding set
  and no_new_privs has every source up (its eBPF loaders, executed children, get their
  capabilities from its permitted set), and holds effective, in every thread, only what it says
  it holds (memdiag_daemon_capability);
- as a dedicated user (nobody) with the loader's capabilities as ambient ones, it runs, says it
  is not root and not locked, and keeps the sources up (docs/operations.md "Hardening" lists what degrades).
"""
import os
import re
import shutil
import socket
import subprocess
import tempfile
import unittest

import harness
from harness import REPO, Daemon, wait_for_samples

UNIT = os.path.join(REPO, "deploy", "systemd", "memdiagd.service")
CONFIG = os.path.join(REPO, "tests", "e2e", "interval-200ms.yaml")

SOURCES = ["meminfo", "vmstat", "pressure", "vm_sysctl", "cgroup", "reclaim_stall", "processes", "canary"]


def service_directives():
    """{key: [values]} of the unit's [Service] section, in order."""
    directives, section = {}, None
    with open(UNIT) as f:
        for line in f:
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("["):
                section = line.strip("[]")
            elif section == "Service":
                key, _, value = line.partition("=")
                directives.setdefault(key.strip(), []).append(value.strip())
    return directives


def expand_syscall_group(name, cache={}):
    """The system calls of a systemd syscall group (recursively), as systemd-analyze lists them."""
    if name in cache:
        return cache[name]
    out = subprocess.run(["systemd-analyze", "syscall-filter", name], capture_output=True, text=True,
                         timeout=30).stdout
    calls = set()
    for line in out.splitlines()[1:]:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        calls |= expand_syscall_group(line) if line.startswith("@") else {line}
    cache[name] = calls
    return calls


def filter_allows(directives):
    """The set of system calls the unit's SystemCallFilter lines let through: the first allow
    list, then each line adding (allow) or removing (~deny) calls, as systemd applies them."""
    allowed = set()
    for value in directives.get("SystemCallFilter", []):
        deny = value.startswith("~")
        names = set()
        for word in value.lstrip("~").split():
            names |= expand_syscall_group(word) if word.startswith("@") else {word}
        allowed = allowed - names if deny else allowed | names
    return allowed


def capability_wrapper(tmp, name, setpriv_args, binary=None):
    """A script that execs the real daemon (or `binary`) under setpriv with these arguments: the
    process the harness starts is the daemon itself (signals, exit code, death with the test)."""
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\nexec setpriv %s -- %s \"$@\"\n" % (" ".join(setpriv_args), binary or harness.MEMDIAGD))
    os.chmod(path, 0o755)
    return path


def start_as(wrapper, *args):
    real = harness.MEMDIAGD
    harness.MEMDIAGD = wrapper
    try:
        return Daemon(*args)
    finally:
        harness.MEMDIAGD = real


def thread_capabilities(pid):
    """{thread name: effective capability mask} of every thread of `pid`."""
    threads = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                name = f.read().strip()
            with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
                eff = re.search(r"^CapEff:\s+([0-9a-f]+)", f.read(), re.M).group(1)
            threads["%s/%s" % (name, tid)] = int(eff, 16)
        except (OSError, AttributeError):
            pass  # a thread that ended meanwhile
    return threads


CAPABILITY_NUMBERS = {"cap_dac_read_search": 2, "cap_ipc_lock": 14, "cap_sys_ptrace": 19, "cap_perfmon": 38,
                      "cap_bpf": 39}


def held(samples):
    return sorted(labels.split('"')[1] for (name, labels) in samples if name == "memdiag_daemon_capability")


@unittest.skipUnless(shutil.which("systemd-analyze"), "needs systemd-analyze")
class Exposure(unittest.TestCase):
    def test_the_unit_is_rated_2_0_or_lower(self):
        p = subprocess.run(["systemd-analyze", "security", "--offline=true", UNIT], capture_output=True, text=True,
                           timeout=60)
        m = re.search(r"Overall exposure level for memdiagd\.service: (\d+\.\d+)", p.stdout)
        self.assertIsNotNone(m, p.stdout + p.stderr)
        self.assertLessEqual(float(m.group(1)), 2.0, p.stdout)

    def test_a_looser_unit_is_rated_higher(self):
        """The rating can fail: without the system call filter the same unit is over 2.0."""
        with tempfile.TemporaryDirectory() as tmp:
            loose = os.path.join(tmp, "memdiagd.service")
            with open(UNIT) as f, open(loose, "w") as out:
                out.write("".join(l for l in f if not l.startswith("SystemCallFilter=")))
            p = subprocess.run(["systemd-analyze", "security", "--offline=true", loose], capture_output=True,
                               text=True, timeout=60)
        self.assertGreater(float(re.search(r"Overall exposure level for \S+: (\d+\.\d+)", p.stdout).group(1)), 2.0)


@unittest.skipUnless(os.geteuid() == 0, "needs root (the unit runs as root)")
@unittest.skipUnless(shutil.which("strace") and shutil.which("systemd-analyze") and shutil.which("setpriv"),
                     "needs strace, systemd-analyze and setpriv")
class Sandbox(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="memdiag-e2e-hardening-")
        self.service = service_directives()

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def unit_bounding_set(self):
        caps = self.service["CapabilityBoundingSet"][0].lower().split()
        return [c[len("cap_"):] for c in caps]

    def test_everything_the_daemon_and_its_children_do_is_within_the_unit(self):
        trace = os.path.join(self.tmp, "memdiagd.strace")
        wrapper = os.path.join(self.tmp, "memdiagd-traced")
        with open(wrapper, "w") as f:
            f.write("#!/bin/sh\nexec strace -f -qq -o %s %s \"$@\"\n" % (trace, harness.MEMDIAGD))
        os.chmod(wrapper, 0o755)
        # With the Unix socket (web.unix_socket): its calls (umask, bind, unlink, SO_PEERCRED) too.
        sock = os.path.join(self.tmp, "memdiagd.sock")
        d = start_as(wrapper, "--config", CONFIG, "--web.unix-socket", sock)
        with d:
            d.wait_ready(timeout=30)
            harness.wait_until(lambda: os.path.exists(sock), 10, "the Unix socket")
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.connect(sock)
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                self.assertTrue(s.recv(64).startswith(b"HTTP/1.1 200"))
            samples = wait_for_samples(d, count=5)
            for source in SOURCES:
                self.assertEqual(samples[("memdiag_source_up", '{source="%s"}' % source)], 1, source)
            for path in ("/metrics", "/healthz", "/api/v1/diagnosis", "/api/v1/diagnosis?format=text", "/"):
                status, _ = harness.http_get(d.port, path)
                self.assertEqual(status, 200, path)
            # The harness started strace; the daemon is its child.
            with open("/proc/%d/task/%d/children" % (d.proc.pid, d.proc.pid)) as f:
                daemon_pid = int(f.read().split()[0])
            os.kill(daemon_pid, harness.signal.SIGHUP)
            harness.wait_until(lambda: "reloaded" in d.logs(), 20, "the reload")
            wait_for_samples(d, count=2)
            os.kill(daemon_pid, harness.signal.SIGTERM)
            self.assertEqual(d.proc.wait(20), 0, d.logs())  # strace exits with its tracee's status

        calls, families, written, wx = set(), set(), set(), []
        with open(trace) as f:
            for line in f:
                m = re.match(r"^\d+\s+(?:<\.\.\. (\w+) resumed>|(\w+)\()", line)
                if m:
                    calls.add(m.group(1) or m.group(2))
                m = re.search(r"\bsocket(?:pair)?\((AF_\w+)", line)
                if m:
                    families.add(m.group(1))
                m = re.search(r'\bopenat\([^,]+, "([^"]+)", ([A-Z_|]+)', line)
                if m and re.search(r"O_WRONLY|O_RDWR|O_CREAT", m.group(2)) and "= -1" not in line:
                    written.add(m.group(1))
                if re.search(r"\b(mmap|mprotect|mremap)\(.*PROT_[A-Z_|]*WRITE[A-Z_|]*EXEC|"
                             r"\b(mmap|mprotect|mremap)\(.*PROT_[A-Z_|]*EXEC[A-Z_|]*WRITE", line):
                    wx.append(line.strip())
        self.assertIn("bpf", calls, "the trace missed the BPF loaders")
        self.assertIn("mlockall", calls)
        allowed = filter_allows(self.service)
        self.assertGreater(len(allowed), 200)
        self.assertEqual(sorted(calls - allowed), [], "system calls the unit's SystemCallFilter refuses")
        self.assertLessEqual(families, set(self.service["RestrictAddressFamilies"][0].split()))
        writable = [p.lstrip("-") for v in self.service.get("ReadWritePaths", []) for p in v.split()]
        outside = sorted(p for p in written
                         if p != "/dev/null" and not any(p == w or p.startswith(w + "/") for w in writable))
        self.assertEqual(outside, [], "files opened for writing outside ReadWritePaths")
        self.assertTrue(any(p.endswith("/cgroup.event_control") for p in written), sorted(written)[:10])
        self.assertEqual(wx, [], "writable and executable memory (MemoryDenyWriteExecute)")

    def test_the_units_capabilities_are_enough_and_the_daemon_keeps_fewer(self):
        # LimitMEMLOCK=infinity cannot be had here (the memlock hard limit cannot be raised in this
        # container): CAP_IPC_LOCK stands in for it, and the daemon says it keeps it for the lock.
        # NoNewPrivileges=true as the unit has it: a child the daemon executes (its eBPF loader)
        # gets no capability its parent does not still hold.
        bounding = self.unit_bounding_set() + ["ipc_lock"]
        wrapper = capability_wrapper(self.tmp, "memdiagd-unit-caps",
                                     ["--no-new-privs", "--bounding-set=-all," + ",".join("+" + c for c in bounding)])
        with start_as(wrapper, "--config", CONFIG) as d:
            d.wait_ready(timeout=30)
            samples = wait_for_samples(d, count=5)
            for source in SOURCES:
                self.assertEqual(samples[("memdiag_source_up", '{source="%s"}' % source)], 1,
                                 "%s down under the unit's capabilities: %s" % (source, d.logs()))
            self.assertEqual(samples[("memdiag_process_scan_info", '{mode="bpf_iter"}')], 1)
            self.assertEqual(held(samples), ["cap_ipc_lock", "cap_sys_ptrace"])
            self.assertEqual(samples[("memdiag_daemon_memory_locked", "")], 1)
            self.assertGreater(samples[("memdiag_daemon_memory_locked_bytes", "")], 1 << 20)
            self.assertEqual(samples[("memdiag_daemon_uid", "")], 0)
            expected = sum(1 << CAPABILITY_NUMBERS[c] for c in held(samples))
            threads = thread_capabilities(d.proc.pid)
            self.assertGreaterEqual(len(threads), 3)
            self.assertEqual({t: hex(m) for t, m in threads.items() if m != expected}, {},
                             "threads holding other capabilities than the daemon reports")

    def test_as_a_dedicated_user_with_the_loaders_capabilities(self):
        caps = "-all,+bpf,+perfmon,+sys_ptrace"
        # nobody must reach the binary and the config: a checkout may sit in a directory only root
        # can enter (a CI clone under a mktemp directory).
        os.chmod(self.tmp, 0o755)
        binary = os.path.join(self.tmp, "memdiagd")
        config = os.path.join(self.tmp, "interval-200ms.yaml")
        shutil.copy2(harness.MEMDIAGD, binary)
        shutil.copy2(CONFIG, config)
        os.chmod(config, 0o644)
        wrapper = capability_wrapper(self.tmp, "memdiagd-nobody",
                                     ["--reuid=65534", "--regid=65534", "--clear-groups",
                                      "--inh-caps=" + caps, "--ambient-caps=" + caps], binary=binary)
        with start_as(wrapper, "--config", config) as d:
            d.wait_ready(timeout=30)
            samples = wait_for_samples(d, count=5)
            self.assertEqual(samples[("memdiag_daemon_uid", "")], 65534)
            self.assertEqual(held(samples), ["cap_sys_ptrace"])
            self.assertEqual(samples[("memdiag_daemon_memory_locked", "")], 0)
            self.assertIn("memory not locked: needs CAP_IPC_LOCK", d.logs())
            for source in SOURCES:
                self.assertEqual(samples[("memdiag_source_up", '{source="%s"}' % source)], 1, source)
            # The eBPF loaders got their capabilities through the ambient set.
            self.assertEqual(samples[("memdiag_process_scan_info", '{mode="bpf_iter"}')], 1)
            # What degrades: the v1 event registration (cgroup.event_control is root's), said once.
            self.assertFalse([k for k in samples if k[0] == "memdiag_cgroup_pressure_events_total"])
            self.assertEqual(samples[("memdiag_cgroups_watched", "")], 0)
            said = [l for l in d.logs().splitlines() if "source cgroup is partly degraded" in l]
            self.assertEqual(len(said), 1, d.logs())
            self.assertIn("memory pressure and OOM notifications cannot be registered", said[0])

    def test_without_dropping_the_daemon_keeps_what_it_was_given(self):
        """The drop can be seen failing: daemon.drop_capabilities: false keeps the loader's set."""
        config = os.path.join(self.tmp, "keep.yaml")
        with open(CONFIG) as f, open(config, "w") as out:
            out.write(f.read() + "\ndaemon: {drop_capabilities: false}\n")
        wrapper = capability_wrapper(self.tmp, "memdiagd-unit-caps",
                                     ["--no-new-privs",
                                      "--bounding-set=-all," + ",".join("+" + c for c in self.unit_bounding_set())])
        with start_as(wrapper, "--config", config) as d:
            d.wait_ready(timeout=30)
            samples = wait_for_samples(d, count=2)
            self.assertEqual(held(samples), sorted("cap_" + c for c in self.unit_bounding_set()))

    def test_a_port_below_1024_is_bound_as_root_outside_the_unit(self):
        """The listener is bound after the narrowing, so CAP_NET_BIND_SERVICE stays for a port
        below 1024 (and only then): without it, root outside the unit could not bind :443."""
        port = next(p for p in range(1000, 900, -1) if port_is_free(p))
        with Daemon("--config", CONFIG, port=port) as d:
            d.wait_ready(timeout=30)
            self.assertIn("cap_net_bind_service", held(wait_for_samples(d, count=2)))
        with Daemon("--config", CONFIG) as d:  # a port above: it goes
            d.wait_ready(timeout=30)
            self.assertNotIn("cap_net_bind_service", held(wait_for_samples(d, count=2)))


def port_is_free(port):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


if __name__ == "__main__":
    unittest.main()
