# SPDX-License-Identifier: Apache-2.0
"""The programs the diagnosis scenarios run inside their memory cgroups (python 3, stdlib only).

    python3 workload.py KIND ARGS...

Each prints "ready" (flushed) once its set-up is done, so the runner can order jobs (touch one
job's memory before the next one starts), then works or idles until killed. Sizes are MiB.

    hold MIB                 touch MIB of private anon once, then idle
    churn MIB                re-touch MIB of private anon forever
    thrash FILE              touch random pages of FILE forever (a working set, not a stream)
    holdthrash MIB FILE      hold MIB of anon, then thrash FILE
    leak START RATE          touch START MiB at once, then RATE MiB/s more, page by page
    passes FILE RATE         read FILE over and over at RATE MiB/s (cached passes)
    promise GIB              map GIB of private anon, never touched (commit, no RAM)
    noreserve GIB            the same with MAP_NORESERVE (not in Committed_AS)
    fork MIB CHILDREN        touch MIB of anon, fork CHILDREN that sleep (copy-on-write shared)
    maps COUNT               split one mapping into COUNT areas with mprotect, until ENOMEM
    burst FILE ON PERIOD     every PERIOD s, for ON s, write the pages of FILE mapped shared (as
                             dirty below); the rest of the period idle
    thp MIB                  forever: map MIB with MADV_HUGEPAGE, touch it, unmap it
    dirty FILE               write every page of FILE, mapped shared, over and over (reclaim at
                             a limit then waits for writeback: a sustained stall)
"""
import ctypes
import mmap
import os
import random
import sys
import time

MiB = 1 << 20
PAGE = 4096
MAP_NORESERVE = 0x4000


def ready(extra=""):
    print("ready" + (" " + extra if extra else ""), flush=True)


def idle():
    while True:
        time.sleep(3600)


def touch(mib):
    m = mmap.mmap(-1, mib * MiB, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    for off in range(0, mib * MiB, PAGE):
        m[off] = 1
    return m


def thrash_forever(path):
    with open(path, "rb") as f:
        m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
    n = len(m) // PAGE
    s = 0
    rnd = random.randrange
    while True:
        for _ in range(1024):
            s += m[rnd(n) * PAGE]


def main(argv):
    kind, args = argv[1], argv[2:]
    if kind == "hold":
        m = touch(int(args[0]))
        ready()
        idle()
    elif kind == "churn":
        n = int(args[0]) * MiB
        m = touch(int(args[0]))
        ready()
        while True:
            for off in range(0, n, PAGE):
                m[off] = (m[off] + 1) & 255
    elif kind == "thrash":
        ready()
        thrash_forever(args[0])
    elif kind == "holdthrash":
        m = touch(int(args[0]))
        ready()
        thrash_forever(args[1])
    elif kind == "leak":
        start, rate = int(args[0]), float(args[1])
        total = 1 << 30
        m = mmap.mmap(-1, total, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        for off in range(0, start * MiB, PAGE):
            m[off] = 1
        ready()
        off = start * MiB
        began = time.monotonic()
        while off < total:
            # paced by the clock, not by sleeps alone: the rate holds on a busy machine
            due = began + (off - start * MiB) / (rate * MiB)
            now = time.monotonic()
            if due > now:
                time.sleep(due - now)
            m[off] = 1
            off += PAGE
        idle()
    elif kind == "passes":
        path, rate = args[0], float(args[1])
        chunk = 4 * MiB
        ready()
        while True:
            with open(path, "rb", buffering=0) as f:
                while True:
                    t = time.monotonic()
                    if not f.read(chunk):
                        break
                    time.sleep(max(0.0, chunk / (rate * MiB) - (time.monotonic() - t)))
    elif kind in ("promise", "noreserve"):
        flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | (MAP_NORESERVE if kind == "noreserve" else 0)
        m = mmap.mmap(-1, int(args[0]) << 30, flags=flags)
        ready()
        idle()
    elif kind == "fork":
        m = touch(int(args[0]))
        kids = []
        for _ in range(int(args[1])):
            pid = os.fork()
            if pid == 0:
                idle()
            kids.append(pid)
        ready(" ".join(map(str, kids)))
        idle()
    elif kind == "maps":
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
        count = int(args[0])
        m = mmap.mmap(-1, 2 * count * PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        base = ctypes.addressof(ctypes.c_char.from_buffer(m))
        failed = None
        for i in range(count):
            if libc.mprotect(base + 2 * i * PAGE, PAGE, mmap.PROT_READ):
                failed = ctypes.get_errno()
                break
        with open("/proc/self/maps") as f:
            areas = sum(1 for _ in f)
        ready("areas=%d errno=%s" % (areas, failed))
        idle()
    elif kind == "burst":
        on, period = float(args[1]), float(args[2])
        with open(args[0], "r+b") as f:
            m = mmap.mmap(f.fileno(), 0)
        ready()
        n = 0
        while True:
            t = time.monotonic()
            while time.monotonic() - t < on:
                n = (n + 1) % 251
                for off in range(0, len(m), 64 * PAGE):
                    for o in range(off, min(off + 64 * PAGE, len(m)), PAGE):
                        m[o] = n
                    if time.monotonic() - t >= on:
                        break
            time.sleep(max(0.0, period - (time.monotonic() - t)))
    elif kind == "dirty":
        with open(args[0], "r+b") as f:
            m = mmap.mmap(f.fileno(), 0)
        ready()
        n = 0
        while True:
            n = (n + 1) % 251
            for off in range(0, len(m), PAGE):
                m[off] = n
    elif kind == "thp":
        n = int(args[0]) * MiB
        ready()
        while True:
            m = mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
            m.madvise(mmap.MADV_HUGEPAGE)
            for off in range(0, n, PAGE):
                m[off] = 1
            m.close()
            time.sleep(0.2)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
