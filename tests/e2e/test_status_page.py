# SPDX-License-Identifier: Apache-2.0
"""The status page at / in a real browser ("a page for people"): Debian's headless
Chromium loads it from the real daemon and runs its script under the page's own
Content-Security-Policy. What it shows must be what /api/v1/diagnosis and /api/v1/history say,
fetched right after the page was dumped (once more if a sample changed them in between): the
stall level and its reasons, the overcommit risk and its reasons, the contributors and victims
(or "none"), and as many points in every chart as the history has entries, each line drawn
through the entries that have a value. Its refresh loop (a fetch every 5 s, in the browser's
virtual time) must have run more than once; a screenshot is written to a directory that is kept
(its path printed); and the console must stay empty: the page logs nothing, so any message is
an uncaught error, a policy violation or a failed load.

Two nodes: this one as it is, and a fixture tree (tests/fixtures/cgroup-v2 with kernel-6.18's
vmstat, PSI and sysctls) whose node PSI, vmstat counters and one container's memory.pressure the
test advances every 100 ms, so the node stalls (stall_time) with contributors and a victim. One
contributor is a cgroup named with markup, which must show as text and never become an element.
"""
import html.parser
import json
import os
import shutil
import signal
import struct
import subprocess
import tempfile
import threading
import time
import unittest

from harness import FIXTURES, Daemon, die_with_parent, http_get, require_all, wait_until

CHROMIUM = shutil.which("chromium")
# A cold start on a busy 2-core machine takes seconds; a hung browser must still fail the test
# well before ctest's 240 s.
BROWSER_TIMEOUT = 90
# Virtual time the page runs for before --dump-dom: enough for its first fetch and two refreshes.
DUMP_BUDGET_MS = 12000
RING = 20  # snapshots; with 200 ms sampling the ring is full in 4 s and its length then stays put

# chart id -> {legend name: history key}
CHART_SERIES = {
    "chart-levels": {"stall": "stall_level", "overcommit": "overcommit_level"},
    "chart-psi": {"some": "psi_some_ratio", "full": "psi_full_ratio"},
    "chart-memory": {"available": "available_bytes", "committed": "commit_charge_bytes",
                     "commit limit": "commit_limit_bytes"},
    "chart-reclaim": {"direct scan": "direct_scan_pages_per_second", "file refaults": "refault_file_pages_per_second",
                      "pages input": "pages_input_per_second"},
}

MARKUP_CGROUP = "<img src=x onerror=alert(1)> & \"q\" 'x'.scope"


def own_group():
    """preexec_fn: the browser and its helpers in a process group of their own (killed together),
    and the browser killed when the test dies."""
    os.setsid()
    die_with_parent()


def run_chromium(workdir, *args):
    """(stdout, stderr) of headless Chromium with `args`, a fresh profile and console logging on
    stderr; AssertionError if it fails or takes longer than BROWSER_TIMEOUT."""
    profile = tempfile.mkdtemp(prefix="profile-", dir=workdir)
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
               "--disable-extensions", "--disable-dev-shm-usage", "--hide-scrollbars", "--mute-audio",
               "--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0", *args]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=own_group)
    try:
        out, err = proc.communicate(timeout=BROWSER_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AssertionError("chromium did not finish within %d s: %s\n%s" % (BROWSER_TIMEOUT, " ".join(args),
                                                                              err[-3000:]))
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # helpers it left behind, if any
        except ProcessLookupError:
            pass
        shutil.rmtree(profile, ignore_errors=True)
    if proc.returncode != 0:
        raise AssertionError("chromium exited %d: %s\n%s" % (proc.returncode, " ".join(args), err[-3000:]))
    return out, err


def console_messages(stderr):
    """The page's console messages in Chromium's log ("[...:INFO:CONSOLE:12] "text", source: ...").
    The log does not say a message's level; the page logs nothing of its own, so any is a fault."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


class Element:
    def __init__(self, tag, attrs, parent):
        self.tag = tag
        self.attrs = dict(attrs)
        self.parent = parent
        self.children = []

    def text(self):
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def iter(self):
        yield self
        for c in self.children:
            if isinstance(c, Element):
                yield from c.iter()

    def classes(self):
        return (self.attrs.get("class") or "").split()


class Dom(html.parser.HTMLParser):
    """The dumped document as a tree of Elements (entities decoded, as the browser has them)."""
    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {}, None)
        self.at = self.root
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        e = Element(tag, attrs, self.at)
        self.at.children.append(e)
        if tag not in self.VOID:
            self.at = e

    def handle_startendtag(self, tag, attrs):
        self.at.children.append(Element(tag, attrs, self.at))

    def handle_endtag(self, tag):
        e = self.at
        while e is not self.root and e.tag != tag:
            e = e.parent
        if e is not self.root:
            self.at = e.parent

    def handle_data(self, data):
        self.at.children.append(data)

    def by_id(self, ident):
        for e in self.root.iter():
            if e.attrs.get("id") == ident:
                return e
        raise AssertionError("no element #%s in the page" % ident)

    def tags(self, tag):
        return [e for e in self.root.iter() if e.tag == tag]


def words(text):
    return " ".join(text.split())


def listed(box):
    """What a list box of the page shows: its text when it lists nothing ("none"), else the
    cgroup (the "path" cell) of each row."""
    if box.attrs.get("data-count") == "0":
        return words(box.text())
    return [words(td.text()) for td in box.iter() if td.tag == "td" and "path" in td.classes()]


def page_view(dom):
    body = dom.tags("body")[0]
    view = {"state": body.attrs.get("data-state")}
    for verdict in ("stall", "overcommit"):
        level = dom.by_id(verdict + "-level")
        view[verdict] = (words(level.text()), level.attrs.get("data-level"))
        view[verdict + " reasons"] = [li.attrs["data-code"] for li in dom.by_id(verdict + "-reasons").iter()
                                      if li.tag == "li" and "data-code" in li.attrs]
    level = dom.by_id("breaking-level")
    view["breaking"] = (words(level.text()), level.attrs.get("data-level"))
    view["breaking items"] = listed(dom.by_id("breaking-items"))
    view["contributors"] = listed(dom.by_id("contributors"))
    view["victims"] = listed(dom.by_id("victims"))
    for chart in CHART_SERIES:
        box = dom.by_id(chart)
        drawn = {p.attrs["data-series"]: int(p.attrs["data-drawn"]) for p in box.iter() if p.tag == "path"}
        view[chart] = (int(box.attrs["data-points"]), drawn)
    return view


def expected_view(report, history):
    stall, overcommit = report["stall"], report.get("overcommit")
    view = {"state": "ok",
            "stall": (stall["level"]["name"], str(stall["level"]["value"])),
            "stall reasons": [r["code"] for r in stall.get("reasons", [])],
            "overcommit": (overcommit["level"]["name"], str(overcommit["level"]["value"])) if overcommit else
                          ("unknown", ""),
            "overcommit reasons": [r["code"] for r in overcommit["reasons"]] if overcommit else [],
            "breaking": (report["breaking"]["level"]["name"], str(report["breaking"]["level"]["value"])) if
                        "breaking" in report else ("unknown", ""),
            "breaking items": [words(i["subject"]) for i in report.get("breaking", {}).get("items", [])] or
                              "nothing is near a wall",
            "contributors": [words(m["cgroup"]) for m in stall.get("contributors", [])] or "none",
            "victims": [words(m["cgroup"]) for m in stall.get("victims", [])] or "none"}
    for chart, series in CHART_SERIES.items():
        drawn = {name: sum(v is not None for v in history[key]) for name, key in series.items()}
        view[chart] = (len(history["taken_at_ms"]), {name: n for name, n in drawn.items() if n})
    return view


def get_json(daemon, path):
    status, body = http_get(daemon.port, path)
    assert status == 200, (path, status, body)
    return json.loads(body)


class StallingTree:
    """tests/fixtures/cgroup-v2 with kernel-6.18's vmstat, PSI and vm sysctls, copied under
    `root`, and a thread that advances, every 100 ms: node memory PSI (some 40 %, full 10 % of
    the time), pgscan_direct and pgsteal_direct (direct reclaim freeing 80 % of what it scans,
    as it does when it works) and workingset_refault_file, and one small container's
    memory.pressure (some 30 %), which makes it a victim. The daemon keeps these files open and
    reads them again from offset 0, so they are rewritten in place at a fixed length. A copy of a
    1 GB container under a name made of markup, holding a little more, is the first contributor."""
    VICTIM = ("kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod0d2c9e7a_1111_2222_3333_444455556666.slice/"
              "cri-containerd-ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100.scope")
    HOLDER = ("kubepods.slice/kubepods-pod11111111_2222_3333_4444_555555555555.slice/"
              "cri-containerd-1234567890abcdef1234567890abcdef1234567890abcdef1234567890abcdef.scope")

    def __init__(self, root):
        self.root = root
        shutil.copytree(os.path.join(FIXTURES, "cgroup-v2"), root)
        for name in ("vmstat", "pressure", "sys"):
            source = os.path.join(FIXTURES, "kernel-6.18", "proc", name)
            target = os.path.join(root, "proc", name)
            if os.path.isdir(source):
                shutil.copytree(source, target)
            else:
                shutil.copy(source, target)
        cgroups = os.path.join(root, "sys", "fs", "cgroup")
        markup = os.path.join(cgroups, "system.slice", MARKUP_CGROUP)
        shutil.copytree(os.path.join(cgroups, self.HOLDER), markup)
        # Holding a little more than the holder it copies, it is the node's first contributor (the
        # smallest set whose relief covers the shortfall starts with the largest), so the page
        # must show its name, markup and all, as text.
        with open(os.path.join(markup, "memory.stat")) as f:
            stat = f.read()
        assert "\nanon 1000000000\n" in "\n" + stat, stat
        with open(os.path.join(markup, "memory.stat"), "w") as f:
            f.write(("\n" + stat).replace("\nanon 1000000000\n", "\nanon 1100000000\n")[1:])
        self.node_psi = os.path.join(root, "proc", "pressure", "memory")
        self.victim_psi = os.path.join(cgroups, self.VICTIM, "memory.pressure")
        self.vmstat = os.path.join(root, "proc", "vmstat")
        with open(self.vmstat) as f:
            self.vmstat_text = f.read()
        for line in ("pgscan_direct 0", "pgsteal_direct 0", "workingset_refault_file 45692"):
            assert "\n%s\n" % line in self.vmstat_text, line
        self.stop_event = threading.Event()
        self.start = time.monotonic()
        self.write(0, create=True)
        self.thread = threading.Thread(target=self.advance)
        self.thread.start()

    @staticmethod
    def psi(some_us, full_us):
        return ("some avg10=0.00 avg60=0.00 avg300=0.00 total=%012d\n"
                "full avg10=0.00 avg60=0.00 avg300=0.00 total=%012d\n" % (some_us, full_us))

    @staticmethod
    def put(path, text, create):
        if create:
            with open(path, "w") as f:
                f.write(text)
            return
        fd = os.open(path, os.O_WRONLY)
        try:
            os.pwrite(fd, text.encode(), 0)
        finally:
            os.close(fd)

    def write(self, seconds, create=False):
        self.put(self.node_psi, self.psi(int(seconds * 0.4e6), int(seconds * 0.1e6)), create)
        self.put(self.victim_psi, self.psi(int(seconds * 0.3e6), int(seconds * 0.05e6)), create)
        self.put(self.vmstat, self.vmstat_text
                 .replace("\npgscan_direct 0\n", "\npgscan_direct %012d\n" % int(seconds * 5000))
                 .replace("\npgsteal_direct 0\n", "\npgsteal_direct %012d\n" % int(seconds * 4000))
                 .replace("\nworkingset_refault_file 45692\n",
                          "\nworkingset_refault_file %012d\n" % (45692 + int(seconds * 800))), create)

    def advance(self):
        while not self.stop_event.wait(0.1):
            self.write(time.monotonic() - self.start)

    def stop(self):
        self.stop_event.set()
        self.thread.join()


class StatusPageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not CHROMIUM:
            if require_all():
                raise AssertionError("chromium is not installed (deploy/install-deps.sh --test installs it) and "
                                     "MEMDIAG_REQUIRE_ALL=1")
            raise unittest.SkipTest("needs Debian's chromium (deploy/install-deps.sh --test)")
        # Kept after the test: the screenshots are its artifacts.
        cls.shots = tempfile.mkdtemp(prefix="memdiag-status-page-")

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="memdiag-page-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.config = os.path.join(self.tmp, "memdiagd.yaml")

    def write_config(self, sources=""):
        with open(self.config, "w") as f:
            f.write("sampler: {interval: 200ms, ring: %d}\n%s" % (RING, sources))

    def wait_for_full_ring(self, daemon):
        wait_until(lambda: len(get_json(daemon, "/api/v1/history")["taken_at_ms"]) == RING, 60,
                   "the ring to hold %d snapshots" % RING)

    def check_page(self, daemon):
        """Dumps the page and compares it with the API read right after; returns (view, report)."""
        url = "http://%s/" % daemon.address
        for attempt in (1, 2):
            dom_text, stderr = run_chromium(self.tmp, "--virtual-time-budget=%d" % DUMP_BUDGET_MS, "--dump-dom", url)
            report = get_json(daemon, "/api/v1/diagnosis")
            history = get_json(daemon, "/api/v1/history")
            dom = Dom(dom_text)
            shown, expected = page_view(dom), expected_view(report, history)
            if shown == expected:
                break
            if attempt == 1:
                print("\nstatus page: the page and the API read after it differ (a sample in between?); again")
        self.assertEqual(console_messages(stderr), [])
        self.assertEqual(shown, expected, "banner: %r" % words(dom.by_id("banner").text()))
        body = dom.tags("body")[0]
        self.assertGreaterEqual(int(body.attrs.get("data-renders", "0")), 2, "the refresh loop ran once at most")
        self.assertEqual(int(body.attrs["data-sequence"]) <= report["sequence"], True)
        # The daemon's strings are text: nothing in the body became an element the page does not make.
        self.assertEqual([e.attrs for e in dom.tags("img")], [])
        return shown, report

    def screenshot(self, daemon, name, width, height):
        path = os.path.join(self.shots, name)
        run_chromium(self.tmp, "--virtual-time-budget=3000", "--window-size=%d,%d" % (width, height),
                     "--screenshot=" + path, "http://%s/" % daemon.address)
        with open(path, "rb") as f:
            png = f.read()
        self.assertEqual(png[:8], b"\x89PNG\r\n\x1a\n")
        self.assertEqual(struct.unpack(">II", png[16:24]), (width, height))
        self.assertGreater(len(png), 10000)  # a page, not a blank
        print("\nstatus page screenshot: %s (%d bytes)" % (path, len(png)))

    def test_this_node(self):
        self.write_config()
        with Daemon("--config", self.config) as d:
            d.wait_ready()
            self.wait_for_full_ring(d)
            shown, report = self.check_page(d)
            self.assertIn(report["stall"]["level"]["name"], ("none", "low", "medium", "high", "critical"))
            self.screenshot(d, "this-node.png", 1280, 1600)

    def test_a_stalling_node_shows_its_reasons_contributors_and_victims(self):
        tree = StallingTree(os.path.join(self.tmp, "tree"))
        self.addCleanup(tree.stop)
        self.write_config("sources:\n  processes: {enabled: false}\n  reclaim_stall: {enabled: false}\n"
                          "  canary: {enabled: false}\n")
        with Daemon("--config", self.config, "--path.procfs", os.path.join(tree.root, "proc"),
                    "--path.sysfs", os.path.join(tree.root, "sys")) as d:
            d.wait_ready()
            self.wait_for_full_ring(d)
            wait_until(lambda: (lambda r: r if r["stall"]["contributors"] and r["stall"]["victims"] else None)(
                get_json(d, "/api/v1/diagnosis")), 30, "the fixture node's stall to name contributors and victims")
            shown, report = self.check_page(d)
            self.assertIn("stall_time", shown["stall reasons"])
            self.assertGreaterEqual(int(shown["stall"][1]), 1)
            self.assertIn("/system.slice/" + MARKUP_CGROUP, shown["contributors"])
            self.assertIn("/" + StallingTree.VICTIM, shown["victims"])
            # The fixture's 1 GiB container holds 93 % of its limit in anon: about to break.
            self.assertIn("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod6f1c2a4e_8b3d_4c2e_9f10_"
                          "1234567890ab.slice/cri-containerd-0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6"
                          "d7e8f9.scope", shown["breaking items"])
            self.assertEqual(shown["breaking"], ("medium", "2"))
            self.assertGreater(shown["chart-psi"][1].get("some", 0), 0)
            self.screenshot(d, "stalling-node.png", 1280, 1600)
            self.screenshot(d, "stalling-node-phone.png", 412, 2400)


if __name__ == "__main__":
    unittest.main()
