# SPDX-License-Identifier: Apache-2.0
"""What is about to break, with the real daemon and real cgroups: the "breaking" section of
/api/v1/diagnosis, the text report and the metrics.

- A helper fragments its own mappings up to vm.max_map_count (the seed incident's pattern):
  the JSON names its pid with its map count and the limit, and the text report says it.
- A process is OOM-killed in a child (no limit of its own) of a v1 cgroup with a 64 MiB limit:
  the kill is attributed to the parent, whose limit killed, with the child as the victim's
  cgroup (v1 counts the kill only in the child's own memory.oom_control), and the victim's pid
  and comm (eBPF's ring of the last victims).
- A cgroup holding ~90 % of its 64 MiB limit in anon (51 MiB mapped and touched, and Python's
  own) is a near-limit item with the figure memory.usage_in_bytes and memory.stat give; a
  cgroup at its limit with nothing but page cache is not an item.
- Userspace OOM killers' marks: user.oomd_kill (systemd-oomd) and trusted.oomd_kill (oomd) set
  on real v1 cgroup directories count as kills by them.

Needs root, a v1 memory hierarchy and the map-areas helper; skipped, loudly, elsewhere."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest

from harness import MEMDIAGD, V1_MEMORY, Daemon, V1Cgroup, die_with_parent, http_get, wait_until, write

HELPER = os.path.join(os.path.dirname(MEMDIAGD), "memdiag-map-areas-helper")
MiB = 1 << 20
COMM = "memdiag-map-are"  # the helper's name as the kernel keeps it (15 characters)


def stat_of(cgroup_dir):
    with open(cgroup_dir + "/memory.stat") as f:
        return {k: int(v) for k, v in (line.split() for line in f)}


def read_int(path):
    with open(path) as f:
        return int(f.read())


@unittest.skipUnless(os.geteuid() == 0 and os.path.isdir(V1_MEMORY) and os.path.exists(HELPER),
                     "needs root, a v1 memory hierarchy and the map-areas helper")
class BreakingTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="memdiag-breaking-", dir="/var/tmp")
        self.top = "memdiag-e2e-brk-%d" % os.getpid()
        self.cgroups = []
        self.procs = []

    def tearDown(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()
        for cg in reversed(self.cgroups):
            cg.remove()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def cgroup(self, name, limit):
        cg = V1Cgroup(self.top + name, limit)
        self.cgroups.append(cg)
        return cg

    def start(self, cg, script, *args, **kwargs):
        p = subprocess.Popen(["sh", "-c", cg.shell(script), *args], preexec_fn=die_with_parent, **kwargs)
        self.procs.append(p)
        return p

    def diagnosis(self, d):
        status, body = http_get(d.port, "/api/v1/diagnosis")
        self.assertEqual(status, 200)
        return json.loads(body)

    def items(self, d, kind):
        return [i for i in (self.diagnosis(d).get("breaking") or {}).get("items", []) if i["kind"] == kind]

    def test_breaking_section_names_the_walls_and_the_kills(self):
        with open("/proc/sys/vm/max_map_count") as f:
            max_map_count = int(f.read())
        top = self.cgroup("", None)
        maps = self.cgroup("/maps", 256 * MiB)
        oom_parent = self.cgroup("/oomjobs", 64 * MiB)
        oom_child = self.cgroup("/oomjobs/g", None)
        anon = self.cgroup("/anon90", 64 * MiB)
        cache = self.cgroup("/cache", 64 * MiB)
        marked = self.cgroup("/marked", None)
        # A file with its blocks on disk and none of them in page cache (direct I/O), for /cache
        # to read into its own page cache.
        data = os.path.join(self.tmp, "data")
        subprocess.run(["dd", "if=/dev/zero", "of=" + data, "bs=1M", "count=160", "oflag=direct", "status=none"],
                       check=True)

        config = os.path.join(self.tmp, "memdiagd.yaml")
        # Only what the verdict reads; the cgroup source sees this test's cgroups only. The
        # capabilities are kept so trusted.* marks (oomd's) can be read (CAP_SYS_ADMIN).
        write(config, "sampler: {interval: 250ms}\n"
                      "daemon: {drop_capabilities: false, lock_memory: false}\n"
                      "sources:\n"
                      "  canary: {enabled: false}\n"
                      "  cgroup: {include: ['/%s*'], max_watched: 0}\n" % self.top)
        with Daemon("--config", config) as d:
            d.wait_ready()
            time.sleep(0.6)  # the window's first snapshots see every cgroup before anything happens

            helper = self.start(maps, 'exec "$0" --zig 200000 --zig-batch 4000 --zig-step-ms 50', HELPER,
                                stdout=subprocess.PIPE, text=True)
            victim = self.start(oom_child, "exec python3 -c \"x = b'\\1' * (200 << 20)\"")
            holder = self.start(anon, "exec python3 -c \"import mmap, sys, time\n"
                                      "m = mmap.mmap(-1, 51 << 20, flags=mmap.MAP_PRIVATE)\n"
                                      "for off in range(0, 51 << 20, 4096): m[off] = 1\n"
                                      "print('ready', flush=True); time.sleep(1e9)\"", stdout=subprocess.PIPE, text=True)
            reader = self.start(cache, 'exec cat "$0"', data, stdout=subprocess.DEVNULL)
            self.assertEqual(holder.stdout.readline().strip(), "ready")
            self.assertEqual(reader.wait(timeout=60), 0)
            self.assertEqual(victim.wait(timeout=60), -9, "the 200 MiB process is OOM-killed at the 64 MiB limit")
            # systemd-oomd's and oomd's marks, as they leave them on a cgroup they kill.
            os.setxattr(marked.v1, "user.oomd_ooms", b"1")
            os.setxattr(marked.v1, "user.oomd_kill", b"2")
            os.setxattr(cache.v1, "trusted.oomd_ooms", b"1")
            os.setxattr(cache.v1, "trusted.oomd_kill", b"1")
            done = None
            while done is None:
                line = helper.stdout.readline()
                self.assertTrue(line, "the helper exited")
                done = re.search(r"zig done maps=(\d+) munmap_errno=(\d+)", line)
            self.assertEqual(int(done[2]), 12, "munmap fails with ENOMEM at vm.max_map_count")
            helper_maps = int(done[1])

            # The map count: the helper, at the wall.
            item = wait_until(lambda: next((i for i in self.items(d, "map_areas")
                                            if i["pid"] == helper.pid and i["value"] == helper_maps), None),
                              30, "the helper's map_areas item at its final count")
            self.assertEqual(item["comm"], COMM)
            self.assertEqual(item["subject"], "pid %d (%s)" % (helper.pid, COMM))
            self.assertEqual(item["cgroup"], maps.path)
            self.assertEqual(item["limit"], max_map_count)
            self.assertEqual(item["value"], helper_maps)
            self.assertGreaterEqual(item["ratio"], 0.99)
            self.assertEqual(item["level"], "critical")
            grouped = "{:,}".format
            self.assertIn("holds %s of %s map areas (vm.max_map_count)" % (grouped(helper_maps), grouped(max_map_count)),
                          item["explanation"])
            status, text = http_get(d.port, "/api/v1/diagnosis?format=text")
            self.assertEqual(status, 200)
            self.assertIn("ABOUT TO BREAK: CRITICAL", text)
            flat = " ".join(text.split())
            self.assertIn("pid %d (%s) holds %s of %s map areas" % (helper.pid, COMM, grouped(helper_maps),
                                                                    grouped(max_map_count)), flat)
            self.assertIn("raise vm.max_map_count", flat)

            # The OOM kill: at /oomjobs's limit, the victim in /oomjobs/g.
            kills = self.diagnosis(d)["breaking"]["items"]
            oom = [i for i in kills if i["kind"] == "oom_kill" and i["source"] == "kernel" and i["cgroup"] == oom_child.path]
            self.assertEqual(len(oom), 1, kills)
            self.assertEqual(oom[0]["subject"], oom_parent.path)
            self.assertEqual(oom[0]["value"], 1)
            self.assertEqual(oom[0]["limit"], 64 * MiB)
            self.assertIn(oom[0]["counted_by"], ("ebpf", "memory.oom_control"))
            self.assertEqual(oom[0]["level"], "high")
            if oom[0]["counted_by"] == "ebpf":  # eBPF's ring of the last victims names who
                self.assertEqual(oom[0]["pid"], victim.pid)
                self.assertEqual(oom[0]["comm"], "python3")
                self.assertIn("killed 1 task (pid %d python3) in %s" % (victim.pid, oom_child.path),
                              oom[0]["explanation"])
            self.assertIn("at the 64MiB limit of %s (an ancestor)" % oom_parent.path, oom[0]["explanation"])

            # The userspace killers' marks.
            by_source = {(i["source"], i["subject"]): i for i in kills if i["kind"] == "oom_kill"}
            self.assertEqual(by_source[("systemd-oomd", marked.path)]["value"], 2)
            self.assertEqual(by_source[("oomd", cache.path)]["value"], 1)

            # Near the limit by anon, with the figure the kernel's files give; not by page cache.
            limits = {i["subject"]: i for i in self.items(d, "cgroup_limit")}
            usage = read_int(anon.v1 + "/memory.usage_in_bytes")
            st = stat_of(anon.v1)
            held = usage - (st["total_cache"] - st["total_shmem"])
            self.assertIn(anon.path, limits, limits)
            self.assertAlmostEqual(limits[anon.path]["value"], held, delta=1 * MiB)
            self.assertEqual(limits[anon.path]["limit"], 64 * MiB)
            self.assertGreaterEqual(limits[anon.path]["ratio"], 0.85)
            self.assertIn(limits[anon.path]["level"], ("low", "medium", "high"))
            self.assertGreaterEqual(read_int(cache.v1 + "/memory.usage_in_bytes"), 56 * MiB,
                                    "the page-cache cgroup is at its limit")
            self.assertNotIn(cache.path, limits, "page cache is reclaimable: no item")

            # The metrics: the level, and one series per item.
            s = d.samples()
            self.assertEqual(s[("memdiag_breaking_level", "")], 4)
            self.assertEqual(s[("memdiag_breaking_item_level",
                                '{kind="map_areas",subject="pid %d (%s)"}' % (helper.pid, COMM))], 4)
            self.assertEqual(s[("memdiag_breaking_item_level",
                                '{kind="oom_kill",subject="%s"}' % oom_parent.path)], 3)
            self.assertEqual(s[("memdiag_breaking_kind_level", '{kind="map_areas"}')], 4)
            del top


if __name__ == "__main__":
    unittest.main()
