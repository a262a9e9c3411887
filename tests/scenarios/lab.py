# SPDX-License-Identifier: Apache-2.0
"""What a scenario sets up on the machine, and takes down again whatever happens: v1 memory
cgroups with limits (and their cgroup2 twins for PSI, unless a scenario says a cgroup has
none), data files with real blocks, the workloads (workload.py, or a shell command) inside
them, a swap file, sysctls.

Scenarios name cgroups by short logical paths ("/small", "/jobs/x"); on the machine the top
component carries a prefix with the runner's pid ("/mdscn1234-small/..."), so two runs never
share a cgroup and a run killed by a timeout is swept by the next (sweep_stale)."""
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

V1 = "/sys/fs/cgroup/memory"
V2 = "/sys/fs/cgroup/unified"
HERE = os.path.dirname(os.path.abspath(__file__))
WORKLOAD = os.path.join(HERE, "workload.py")
PREFIX = "mdscn"
MiB = 1 << 20
GiB = 1 << 30


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def read(path):
    with open(path) as f:
        return f.read()


def die_with_parent():
    import ctypes
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _kill_members(directory):
    try:
        pids = read(directory + "/cgroup.procs").split()
    except OSError:
        return
    for pid in pids:
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass


def remove_cgroup_tree(directory):
    """Children first; kills what still runs there; retries while killed tasks leave."""
    if not os.path.isdir(directory):
        return
    for entry in sorted(os.listdir(directory)):
        sub = os.path.join(directory, entry)
        if os.path.isdir(sub):
            remove_cgroup_tree(sub)
    for _ in range(100):
        _kill_members(directory)
        try:
            os.rmdir(directory)
            return
        except OSError:
            time.sleep(0.1)
    print("lab: could not remove %s" % directory, file=sys.stderr)


def sweep_stale():
    """Removes cgroups, swap files and data left by a run that was killed (a ctest timeout)."""
    for root in (V1, V2):
        if not os.path.isdir(root):
            continue
        for entry in os.listdir(root):
            if not entry.startswith(PREFIX):
                continue
            owner = entry[len(PREFIX):].split("-", 1)[0]
            if owner.isdigit() and not os.path.exists("/proc/" + owner):
                remove_cgroup_tree(os.path.join(root, entry))
    for entry in os.listdir("/var/tmp"):
        if not entry.startswith("memdiag-scn-"):
            continue
        owner = entry[len("memdiag-scn-"):].split("-", 1)[0]
        if owner.isdigit() and not os.path.exists("/proc/" + owner):
            path = os.path.join("/var/tmp", entry)
            swap = os.path.join(path, "swapfile")
            if os.path.exists(swap):
                subprocess.run(["swapoff", swap], capture_output=True)
            shutil.rmtree(path, True)


class Cgroup:
    def __init__(self, lab, name, limit, twin=True, swappiness=0):
        self.lab = lab
        self.name = name
        self.path = lab.real(name)
        self.v1 = V1 + self.path
        self.v2 = V2 + self.path if twin and os.path.isdir(V2) else None
        os.mkdir(self.v1)
        lab._cgroups.append(self)
        if limit is not None:
            write(self.v1 + "/memory.limit_in_bytes", str(limit))
        # No swap unless a scenario adds it: then anon goes to swap only where it says so.
        write(self.v1 + "/memory.swappiness", str(swappiness))
        if self.v2:
            os.mkdir(self.v2)

    def enter(self):
        """Shell text that moves the shell running it into this cgroup (and its twin)."""
        text = "echo $$ > %s/cgroup.procs; " % self.v1
        if self.v2:
            text += "echo $$ > %s/cgroup.procs; " % self.v2
        return text

    def stat(self):
        out = {}
        for line in read(self.v1 + "/memory.stat").splitlines():
            k, v = line.split()
            out[k] = int(v)
        return out

    def psi_some_avg10(self):
        if not self.v2:
            return None
        for line in read(self.v2 + "/memory.pressure").splitlines():
            if line.startswith("some "):
                return float(line.split("avg10=")[1].split()[0])
        return None


class Job:
    def __init__(self, name, cgroup, proc):
        self.name, self.cgroup, self.proc = name, cgroup, proc
        self.pid = proc.pid
        self.ready_line = None

    def wait_ready(self, timeout):
        deadline = time.monotonic() + timeout
        buf = b""
        fd = self.proc.stdout.fileno()
        while time.monotonic() < deadline:
            r, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            if not r:
                break
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            buf += chunk
            if b"\n" in buf:
                self.ready_line = buf.split(b"\n", 1)[0].decode()
                return self.ready_line
        raise RuntimeError("job %s not ready within %g s (exit %s)" % (self.name, timeout, self.proc.poll()))

    def kill(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()


class Lab:
    def __init__(self):
        self.tag = "%s%d" % (PREFIX, os.getpid())
        self.tmp = tempfile.mkdtemp(prefix="memdiag-scn-%d-" % os.getpid(), dir="/var/tmp")
        self._cgroups = []
        self.jobs = {}
        self._sysctls = []
        self._swap = None
        self.notes = []  # what the scenario measured beside the daemon (PSI of a twin, ...)

    # --- names -----------------------------------------------------------------------------
    def real(self, name):
        parts = name.strip("/").split("/")
        return "/" + "/".join([self.tag + "-" + parts[0]] + parts[1:])

    def logical(self, path):
        """A cgroup path as the scenario names it; other cgroups of the machine keep their path."""
        if not isinstance(path, str):
            return path
        start = "/" + self.tag + "-"
        if path.startswith(start):
            return "/" + path[len(start):]
        return path

    # --- set-up ----------------------------------------------------------------------------
    def cgroup(self, name, limit, twin=True, swappiness=0):
        return Cgroup(self, name, limit, twin=twin, swappiness=swappiness)

    def cg(self, name):
        for c in self._cgroups:
            if c.name == name:
                return c
        raise KeyError(name)

    def file(self, name, mib):
        """A file of MIB MiB with real blocks, written around the page cache (nobody is charged)."""
        path = os.path.join(self.tmp, name)
        subprocess.run(["dd", "if=/dev/zero", "of=" + path, "bs=1M", "count=%d" % mib, "oflag=direct",
                        "status=none"], check=True)
        return path

    def path(self, name):
        return os.path.join(self.tmp, name)

    def workload_cmd(self):
        """The shell words that run workload.py (for scenarios that write their own shell)."""
        return "%s %s" % (sys.executable, WORKLOAD)

    def start(self, job, cgroup, *workload, shell=None, wait_ready=30.0):
        """Runs `workload.py *workload` (or the shell text `shell`) in `cgroup` as job `job`; its
        pid is the job's (exec), its process group is killed at the end."""
        if shell is None:
            shell = "exec %s %s %s" % (sys.executable, WORKLOAD, " ".join("'%s'" % w for w in workload))
        proc = subprocess.Popen(["sh", "-c", cgroup.enter() + shell], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, start_new_session=True, preexec_fn=die_with_parent)
        j = Job(job, cgroup, proc)
        self.jobs[job] = j
        if wait_ready:
            j.wait_ready(wait_ready)
        return j

    def stop(self, job):
        self.jobs[job].kill()

    def sysctl(self, key, value):
        path = "/proc/sys/" + key.replace(".", "/")
        self._sysctls.append((path, read(path).strip()))
        write(path, str(value))

    def swap(self, mib):
        path = os.path.join(self.tmp, "swapfile")
        subprocess.run(["fallocate", "-l", "%dM" % mib, path], check=True)
        os.chmod(path, 0o600)
        subprocess.run(["mkswap", path], check=True, capture_output=True)
        subprocess.run(["swapon", path], check=True)
        self._swap = path
        return path

    # --- take-down -------------------------------------------------------------------------
    def close(self):
        for j in self.jobs.values():
            try:
                j.kill()
            except Exception as e:  # keep cleaning
                print("lab: killing %s: %s" % (j.name, e), file=sys.stderr)
        for cg in reversed(self._cgroups):  # children were made after their parents
            for d in (cg.v1, cg.v2):
                if d:
                    remove_cgroup_tree(d)
        if self._swap:
            subprocess.run(["swapoff", self._swap], capture_output=True)
        for path, value in reversed(self._sysctls):
            try:
                write(path, value)
            except OSError as e:
                print("lab: restoring %s: %s" % (path, e), file=sys.stderr)
        shutil.rmtree(self.tmp, True)
