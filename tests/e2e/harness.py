# SPDX-License-Identifier: Apache-2.0
"""Runs the real memdiagd for end-to-end tests: free loopback ports, readiness, scraping,
parsing the exposition, and always cleaning up."""
import ctypes
import http.client
import os
import re
import signal
import socket
import subprocess
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MEMDIAGD = os.environ.get("MEMDIAGD", os.path.join(REPO, "build", "bin", "memdiagd"))
FIXTURES = os.path.join(REPO, "tests", "fixtures")

SAMPLE_RE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)$')


def die_with_parent():
    """preexec_fn: the child gets SIGKILL when the test process dies (a ctest timeout, a
    crash), so no daemon or Prometheus outlives the suite."""
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_PDEATHSIG = 1
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def parse_exposition(text):
    """{(name, labels-string): float} for every sample line."""
    samples = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE_RE.match(line)
        if not m:
            raise AssertionError("unparseable exposition line: %r" % line)
        samples[(m.group(1), m.group(2) or "")] = float(m.group(3))
    return samples


def http_get(port, path, timeout=5):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, resp.read().decode()
    finally:
        conn.close()


class Daemon:
    """memdiagd on a free 127.0.0.1 port; stderr captured to a file for log assertions."""

    def __init__(self, *args, port=None, listen_flag=True):
        """listen_flag=False: the config file given in args sets web.listen_address to `port`."""
        self.port = port or free_port()
        self.address = "127.0.0.1:%d" % self.port
        self.log = tempfile.NamedTemporaryFile(prefix="memdiagd-", suffix=".log", delete=False)
        flags = ["--web.listen-address", self.address] if listen_flag else []
        self.proc = subprocess.Popen([MEMDIAGD, *flags, *args], stdout=subprocess.DEVNULL, stderr=self.log,
                                     preexec_fn=die_with_parent)

    def wait_ready(self, timeout=10, need_sample=True):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError("memdiagd exited early (%s): %s" % (self.proc.returncode, self.logs()))
            try:
                status, body = http_get(self.port, "/metrics", timeout=1)
                if status == 200 and (not need_sample or "memdiag_source_up" in body):
                    return self
            except OSError:
                pass
            time.sleep(0.05)
        raise AssertionError("memdiagd not ready within %ss: %s" % (timeout, self.logs()))

    def scrape(self):
        status, body = http_get(self.port, "/metrics")
        assert status == 200, status
        return body

    def samples(self):
        return parse_exposition(self.scrape())

    def logs(self):
        with open(self.log.name) as f:
            return f.read()

    def signal(self, sig):
        self.proc.send_signal(sig)

    def stop(self, timeout=10):
        """SIGTERM and wait; returns the exit code (kills after timeout)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise
        return self.proc.returncode

    def close(self):
        try:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        finally:
            os.unlink(self.log.name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def run(*args, timeout=30):
    return subprocess.run([MEMDIAGD, *args], capture_output=True, text=True, timeout=timeout)


def promtool_check(text):
    p = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
    return p.returncode, (p.stdout + p.stderr).strip()


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def wait_for(predicate, timeout=20):
    """The first truthy value of predicate() within `timeout` seconds, polled every 0.1 s; None."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    return None


def wait_until(predicate, timeout, what):
    """The first truthy value of predicate(), polled every 0.1 s; AssertionError saying `what`
    was awaited (a string, or a function giving one at that moment), for how long, and the
    last value seen when `timeout` seconds pass first. The
    timeout is a generous bound for a slow or busy machine, never the thing tested: tests wait
    for what they mean (a sample count, a log line) and assert on that."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        last = predicate()
        if last:
            return last
        if time.monotonic() >= deadline:
            raise AssertionError("waited %g s for %s; last seen: %r" % (timeout, what() if callable(what) else what, last))
        time.sleep(0.1)


def samples_taken(samples):
    """memdiag_sampler_samples_total of an exposition parsed by parse_exposition."""
    return samples[("memdiag_sampler_samples_total", "")]


def wait_for_samples(daemon, count=2, timeout=60):
    """Waits until the daemon has taken `count` more samples than when called (by its own
    counter, memdiag_sampler_samples_total) and returns the samples of the scrape that saw it:
    whatever happened before the call is in that snapshot."""
    start = samples_taken(daemon.samples())

    def later():
        s = daemon.samples()
        return s if samples_taken(s) >= start + count else None
    return wait_until(later, timeout, "%d more samples than the %d taken" % (count, start))


def node_pressure(resource="memory", kind="some", field="avg10"):
    """A node PSI figure (/proc/pressure/<resource>, line `kind`, `field`), or None without PSI."""
    try:
        with open("/proc/pressure/" + resource) as f:
            for line in f:
                words = line.split()
                if words and words[0] == kind:
                    return float(dict(w.split("=") for w in words[1:])[field])
    except OSError:
        pass
    return None


def wait_for_calm_memory(below=2.0, timeout=120):
    """Waits until node memory PSI "some" avg10 is below `below` percent: an earlier test's (or
    another program's) pressure takes tens of seconds to decay from avg10, and a test that needs
    a calm node says so when it does not get one instead of failing on a figure it assumed.
    Returns at once without PSI."""
    if node_pressure() is None:
        return
    wait_until(lambda: node_pressure() < below, timeout,
               lambda: "node memory PSI some avg10 below %g %% (now %s %%, full %s %%): something else presses on "
                       "memory" % (below, node_pressure(), node_pressure(kind="full")))


def require_all():
    """True where every test must run (MEMDIAG_REQUIRE_ALL=1, set by .ci/run): a tool or kernel
    feature a test needs and does not find is then a failure, not a skip."""
    return os.environ.get("MEMDIAG_REQUIRE_ALL") == "1"


V1_MEMORY = "/sys/fs/cgroup/memory"
UNIFIED = "/sys/fs/cgroup/unified"


class V1Cgroup:
    """A cgroup v1 memory cgroup with a limit (None: none of its own, as a child under a limited
    parent) and, where the cgroup2 mount exists (the hybrid layout), its twin there; run() puts
    a shell in both. `name` may be nested ("parent/child", the parent made first). remove()
    kills whatever still runs in them and removes both, retrying while the killed tasks leave."""

    def __init__(self, name, limit):
        self.path = "/" + name
        self.v1 = V1_MEMORY + self.path
        self.v2 = UNIFIED + self.path if os.path.isdir(UNIFIED) else None
        os.mkdir(self.v1)
        try:
            if limit is not None:
                write(self.v1 + "/memory.limit_in_bytes", str(limit))
            # On a host with swap, anonymous memory would go to swap instead of being reclaimed
            # or OOM-killed as the tests expect; a memsw limit would do it too, but it moves the
            # failures the tests count from memory.failcnt to memory.memsw.failcnt.
            write(self.v1 + "/memory.swappiness", "0")
            if self.v2:
                os.mkdir(self.v2)
        except BaseException:
            os.rmdir(self.v1)  # nothing runs in it yet; the caller never gets it to remove
            raise

    def shell(self, script):
        """`script` prefixed with what moves its shell into the cgroup (and its twin)."""
        enter = "echo $$ > %s/cgroup.procs; " % self.v1
        if self.v2:
            enter += "echo $$ > %s/cgroup.procs; " % self.v2
        return enter + script

    def run(self, script, timeout=120):
        return subprocess.run(["sh", "-c", self.shell(script)], capture_output=True, text=True, timeout=timeout,
                              preexec_fn=die_with_parent)

    def remove(self):
        for cg in (self.v1, self.v2):
            if not cg or not os.path.isdir(cg):
                continue
            for _ in range(100):
                with open(cg + "/cgroup.procs") as f:
                    for pid in f.read().split():
                        try:
                            os.kill(int(pid), signal.SIGKILL)
                        except ProcessLookupError:
                            pass
                try:
                    os.rmdir(cg)
                    break
                except OSError:
                    time.sleep(0.1)


def start_dirty_writer(cgroup, data, file_bytes):
    """Keeps `cgroup` (a V1Cgroup) at its limit with dirty pages: a file `data` larger than the
    limit, mapped shared and written page by page over and over. Reclaim in the cgroup cannot
    write file pages back itself, so faults there wait for the flusher threads; on 2 CPUs this
    one stalled task drives node memory PSI "full" to a few percent within seconds. Returns the
    writer (a Popen; the caller kills it)."""
    # O_DIRECT: written through the page cache, the file would be charged to the caller's cgroup.
    subprocess.run(["dd", "if=/dev/zero", "of=" + data, "bs=1M", "count=%d" % (file_bytes >> 20),
                    "oflag=direct", "status=none"], check=True)
    dirty = ("import mmap, sys\n"
             "f = open(sys.argv[1], 'r+b')\n"
             "m = mmap.mmap(f.fileno(), 0)\n"
             "n = 0\n"
             "while True:\n"
             "    n = (n + 1) % 251\n"
             "    for i in range(0, len(m), 4096): m[i] = n\n")
    return subprocess.Popen(["sh", "-c", cgroup.shell('exec python3 -c "$0" "$1"'), dirty, data],
                            preexec_fn=die_with_parent)
