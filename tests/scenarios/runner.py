# SPDX-License-Identifier: Apache-2.0
"""Runs diagnosis scenarios live: the real daemon (MEMDIAGD, default build/bin/memdiagd; sampler
every 500 ms, the shipped defaults otherwise) beside real workloads in v1 memory cgroups with
limits (cgroup2 twins for PSI), polls /api/v1/diagnosis every 0.5 s (and `memdiagd diagnose
--format text` where a scenario reads the text), and judges the polls against what the
scenario declares a correct tool says (expect.py). Everything it set up is taken down whatever
happens (lab.py).

    python3 tests/scenarios/runner.py [SCENARIO ...]        # all when none is named
        --results DIR   where each scenario's result (JSON) goes (default: $MEMDIAG_SCENARIO_RESULTS,
                        else build/tests/scenarios/results)
        --scoreboard    then regenerate docs/diagnosis-scoreboard.md from DIR (scoreboard.py)
        -v              print every poll's judged values

Exit status: 0 every expectation held, 1 one did not (or the scenario broke), 77 a
prerequisite is missing (root, the v1 memory hierarchy, its cgroup2 twin, PSI): a failure
instead under MEMDIAG_REQUIRE_ALL=1.

SUBJECTS below is the one place where the scenarios' vocabulary meets the daemon's JSON."""
import argparse
import glob
import http.client
import importlib.util
import json
import os
import re
import subprocess
import sys
import time
import traceback

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import lab as labmod  # noqa: E402

MEMDIAGD = os.environ.get("MEMDIAGD", os.path.join(REPO, "build", "bin", "memdiagd"))
SKIPPED = 77
POLL_SECONDS = 0.5
LEVELS = ["none", "low", "medium", "high", "critical"]
MiB = 1 << 20


# --- The daemon -------------------------------------------------------------------------------
def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(port, path, timeout=5):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        return r.status, r.read().decode()
    finally:
        conn.close()


class Daemon:
    def __init__(self, workdir, config_extra=""):
        self.port = free_port()
        self.config = os.path.join(workdir, "memdiagd.yaml")
        with open(self.config, "w") as f:
            f.write("sampler: {interval: 500ms, ring: 240}\n" + config_extra)
        self.logpath = os.path.join(workdir, "memdiagd.log")
        self.log = open(self.logpath, "w")
        self.proc = subprocess.Popen([MEMDIAGD, "--config", self.config, "--web.listen-address",
                                      "127.0.0.1:%d" % self.port], stdout=subprocess.DEVNULL, stderr=self.log,
                                     preexec_fn=labmod.die_with_parent)

    def url(self):
        return "http://127.0.0.1:%d/api/v1/diagnosis" % self.port

    def diagnosis(self):
        status, body = http_get(self.port, "/api/v1/diagnosis")
        if status != 200:
            raise RuntimeError("/api/v1/diagnosis: HTTP %d" % status)
        return json.loads(body)

    def cgroup_forecasts(self):
        """{cgroup: seconds} of memdiag_cgroup_forecast_exhaustion_seconds."""
        status, body = http_get(self.port, "/metrics")
        out = {}
        for line in body.splitlines():
            if line.startswith("memdiag_cgroup_forecast_exhaustion_seconds{"):
                m = re.search(r'cgroup="([^"]*)"', line)
                if m:
                    out[m.group(1)] = float(line.rsplit(" ", 1)[1])
        return out

    def text(self):
        p = subprocess.run([MEMDIAGD, "diagnose", "--url", self.url(), "--format", "text"], capture_output=True,
                           text=True, timeout=15)
        return p.stdout

    def wait_ready(self, timeout=20):
        deadline = time.monotonic() + timeout
        first = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("memdiagd exited (%s): %s" % (self.proc.returncode, self.logs()[-2000:]))
            try:
                seq = self.diagnosis().get("sequence", 0)
                first = seq if first is None else first
                if seq >= first + 2:  # rates need two samples
                    return
            except (OSError, ValueError, RuntimeError):
                pass
            time.sleep(0.1)
        raise RuntimeError("memdiagd not serving a diagnosis within %ss: %s" % (timeout, self.logs()[-2000:]))

    def logs(self):
        with open(self.logpath) as f:
            return f.read()

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.log.close()


# --- From the JSON to the scenarios' subjects (the one place to adapt to the JSON) ------------
def stall_scope(doc, scope, lab):
    """The stall section of a scope: the top-level "stall" for the node; the entry of "cgroups"
    for a cgroup (a cgroup not listed does not stall: level none, no roles)."""
    if scope == "node":
        return doc.get("stall") or {}
    real = lab.real(scope)
    for entry in doc.get("cgroups") or []:
        if entry.get("cgroup") == real:
            return entry
    return {"level": {"name": "none", "value": 0}, "contributors": [], "victims": [], "processes": [],
            "reasons": [], "listed": False}


def job_of(lab, pid):
    for name, job in lab.jobs.items():
        if job.pid == pid:
            return "job:" + name
    return "pid %s" % pid


def members(s, key, lab):
    if key not in s:
        return None
    return [lab.logical(m.get("cgroup")) for m in s[key] or []]


def member_field(s, cgroup, field, lab):
    for key in ("contributors", "victims"):
        for m in s.get(key) or []:
            if lab.logical(m.get("cgroup")) == cgroup:
                return m.get(field)
    return None


def breaking_items(doc, lab):
    b = doc.get("breaking")
    if b is None:
        return None
    out = []
    for it in b.get("items") or []:
        item = dict(it)
        # An OOM kill's or a limit's item names its scope as its subject.
        if not item.get("scope") and item.get("kind") in ("oom_kill", "cgroup_limit"):
            item["scope"] = item.get("subject")
        for k in ("cgroup", "scope"):
            item[k] = lab.logical(item.get(k))
        if item.get("pid") is not None:
            item["job"] = job_of(lab, item["pid"])
        out.append(item)
    return out


def forecast(doc, scope, lab):
    """An exhaustion forecast for a scope: its exhaustion_seconds, a "breaking" item about its
    limit, or (a cgroup that does not stall is not in "cgroups") its
    memdiag_cgroup_forecast_exhaustion_seconds series, where the scenario reads the metrics."""
    s = stall_scope(doc, scope, lab)
    if s.get("exhaustion_seconds") is not None:
        return True
    if lab.real(scope) in doc.get("_metric_cgroup_forecasts", ()):  # a scope that does not stall
        return True
    for it in breaking_items(doc, lab) or []:
        if it.get("kind") == "cgroup_limit" and scope in (it.get("cgroup"), it.get("scope")):
            return True
    return False


def logical_text(text, lab):
    return text.replace("/" + lab.tag + "-", "/") if isinstance(text, str) else text


def _stall(f):
    return lambda doc, scope, lab, text: f(stall_scope(doc, scope, lab), lab)


SUBJECTS = {
    # stall scopes: "node" and cgroups
    "level": _stall(lambda s, lab: (s.get("level") or {}).get("name")),
    "instant_level": _stall(lambda s, lab: (s.get("instant_level") or {}).get("name")),
    "reasons": _stall(lambda s, lab: [r.get("code") for r in s["reasons"]] if "reasons" in s else None),
    "contributors": _stall(lambda s, lab: members(s, "contributors", lab)),
    "victims": _stall(lambda s, lab: members(s, "victims", lab)),
    "processes": _stall(lambda s, lab: [job_of(lab, p.get("pid")) for p in s["processes"]]
                        if "processes" in s else None),
    # someone named: a contributor cgroup or a process
    "named": _stall(lambda s, lab: (members(s, "contributors", lab) or []) +
                    [job_of(lab, p.get("pid")) for p in s.get("processes") or []]),
    "similar_members": _stall(lambda s, lab: s.get("similar_members")),
    "confidence": _stall(lambda s, lab: s.get("confidence")),
    "missing_signals": _stall(lambda s, lab: s.get("missing_signals")),
    "easing": _stall(lambda s, lab: s.get("easing")),
    "unattributed_bytes": _stall(lambda s, lab: s.get("unattributed_bytes")),
    "cgroups_at_limit": _stall(lambda s, lab: s.get("cgroups_at_limit")),
    # contributors whose relief (RAM) is said to cover the scope's shortfall
    "covering": _stall(lambda s, lab: [lab.logical(m.get("cgroup")) for m in s.get("contributors") or []
                                       if m.get("relief_covers_shortfall")]),
    "zero_stall_victims": _stall(lambda s, lab: [lab.logical(m.get("cgroup")) for m in s.get("victims") or []
                                                 if not m.get("stall_ratio")]),
    "forecast": lambda doc, scope, lab, text: forecast(doc, scope, lab),
    # overcommit
    "overcommit_level": lambda doc, scope, lab, text: ((doc.get("overcommit") or {}).get("level") or {}).get("name"),
    "cgroups_over_limit": lambda doc, scope, lab, text: (
        [lab.logical(c.get("cgroup")) for c in doc["overcommit"]["cgroups_over_limit"]]
        if "cgroups_over_limit" in (doc.get("overcommit") or {}) else None),
    "cow_shared_bytes": lambda doc, scope, lab, text: (doc.get("overcommit") or {}).get("cow_shared_bytes"),
    "holder_processes": lambda doc, scope, lab, text: [
        job_of(lab, p.get("pid")) for p in (doc.get("promise_holders") or {}).get("processes") or []],
    "holder_cgroups": lambda doc, scope, lab, text: [
        lab.logical(c.get("cgroup")) for c in (doc.get("promise_holders") or {}).get("cgroups") or []],
    # about to break
    "breaking_level": lambda doc, scope, lab, text: (((doc.get("breaking") or {}).get("level")) or {}).get("name"),
    "breaking_items": lambda doc, scope, lab, text: breaking_items(doc, lab),
    # the report as a whole
    "next_steps": lambda doc, scope, lab, text: [logical_text(s, lab) for s in doc.get("next_steps") or []],
    "text": lambda doc, scope, lab, text: logical_text(text, lab),
}


def subject_value(doc, text, scope, subject, lab):
    if subject.startswith("relief:"):  # relief:/jobs/x, a member's relief in RAM
        return member_field(stall_scope(doc, scope, lab), subject[len("relief:"):], "relief_bytes", lab)
    return SUBJECTS[subject](doc, scope, lab, text)


# --- Judging ----------------------------------------------------------------------------------
def rank(v):
    if isinstance(v, str) and v in LEVELS:
        return LEVELS.index(v)
    return v


def substitute(regex, lab):
    return re.sub(r"\{pid:([^}]+)\}", lambda m: str(lab.jobs[m.group(1)].pid), regex)


def match_item(item, want):
    """An object of a list (a "breaking" item) matches `want`: each key equal, except "at" (the
    item's cgroup or scope), "min_value" (value at least) and "regex" (its explanation)."""
    for k, v in want.items():
        if k == "at":
            if v not in (item.get("cgroup"), item.get("scope")):
                return False
        elif k == "min_value":
            if item.get("value") is None or item["value"] < v:
                return False
        elif k == "regex":
            if not re.search(v, str(item.get("explanation", ""))):
                return False
        elif item.get(k) != v:
            return False
    return True


def judge(op, got, want, lab):
    if op in ("<=", ">=", "=="):
        if got is None:
            return False
        a, b = rank(got), rank(want)
        try:
            return a <= b if op == "<=" else a >= b if op == ">=" else a == b
        except TypeError:
            return False
    if op in ("has", "lacks"):
        items = set(got or [])
        wanted = want if isinstance(want, list) else [want]
        if op == "has":
            return got is not None and all(w in items for w in wanted)
        return not any(w in items for w in wanted)
    if op == "nonempty":
        return bool(got)
    if op == "empty":
        return not got
    if op in ("match", "nomatch"):
        rx = re.compile(substitute(want, lab))
        strings = got if isinstance(got, list) else [got] if got else []
        found = any(rx.search(s) for s in strings if isinstance(s, str))
        return found if op == "match" else not found
    if op == "true":
        return got is True
    if op == "false":
        return got is False
    if op == "has_item":
        return any(match_item(it, want) for it in got or [])
    raise ValueError("unknown operator %r" % op)


def describe(test):
    if "any" in test:
        return "(" + " or ".join(describe(t) for t in test["any"]) + ")"
    if "all" in test:
        return "(" + " and ".join(describe(t) for t in test["all"]) + ")"
    v = test["value"]
    if isinstance(v, int) and not isinstance(v, bool) and v >= MiB and v % MiB == 0:
        v = "%dGiB" % (v >> 30) if v % (1 << 30) == 0 else "%dMiB" % (v >> 20)
    shown = "" if v is None else " " + (json.dumps(v) if isinstance(v, (dict, list)) else str(v))
    words = {"<=": "<=", ">=": ">=", "==": "=", "has": "has", "lacks": "lacks", "nonempty": "non-empty",
             "empty": "empty", "match": "matches", "nomatch": "never matches", "true": "true", "false": "false",
             "has_item": "has an item"}
    scope = "" if test["scope"] in ("report", "overcommit", "promises", "breaking") else test["scope"] + " "
    return "%s%s %s%s" % (scope, test["subject"], words.get(test["op"], test["op"]), shown)


# A path in what the daemon said that is not one of the scenario's cgroups (a session's, a
# service's, another test's): its name changes from run to run, the scoreboard says only that
# it was another cgroup. Paths of the kernel's files are left as they are.
PATH_TOKEN = re.compile(r"(?<![\w.])/[\w.@:-]+(?:/[\w.@:-]+)*")
KERNEL_PATHS = ("/proc", "/sys", "/dev", "/etc", "/usr", "/var", "/tmp", "/run")


def foreign_to_generic(text, known):
    def one(m):
        p = m.group(0)
        if p in known or p == "/" or any(p == k or p.startswith(k + "/") for k in KERNEL_PATHS):
            return p
        return "(another cgroup)"
    return PATH_TOKEN.sub(one, text)


def coarse(v, known=()):
    """A value as the scoreboard shows it: levels by name, cgroups by the scenario's names, sizes
    in coarse buckets, no numbers that wobble."""
    if v is None:
        return "absent"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (int, float)):
        if v == 0:
            return "0"
        for bound, name in ((16 * MiB, "<16MiB"), (256 * MiB, "<256MiB"), (1 << 30, "<1GiB"), (4 << 30, "<4GiB")):
            if v < bound:
                return name if v > 1000 else "a count" if isinstance(v, int) else "set"
        return ">=4GiB"
    if isinstance(v, str):
        if v in known:
            return v
        v = foreign_to_generic(v, known)
        v = re.sub(r"\d+(\.\d+)?", "#", v)
        return v if len(v) <= 90 else v[:87] + "..."
    if isinstance(v, list):
        if not v:
            return "none"
        shown = sorted({coarse(x, known) for x in v})
        return ", ".join(shown[:4]) + (" +%d" % (len(shown) - 4) if len(shown) > 4 else "")
    if isinstance(v, dict):
        keys = ("kind", "job", "cgroup", "scope")
        return "{" + " ".join("%s=%s" % (k, v[k]) for k in keys if v.get(k)) + "}"
    return str(v)


def evaluate_test(test, doc, text, lab):
    """(held, shown value)."""
    if "any" in test or "all" in test:
        parts = [evaluate_test(t, doc, text, lab) for t in test.get("any") or test.get("all")]
        held = any(p[0] for p in parts) if "any" in test else all(p[0] for p in parts)
        names = [t.get("subject", "") for t in test.get("any") or test.get("all")]
        return held, "; ".join("%s %s" % (n, p[1]) for n, p in zip(names, parts))
    got = subject_value(doc, text, test["scope"], test["subject"], lab)
    known = {c.name for c in getattr(lab, "_cgroups", ())}
    if test["op"] in ("match", "nomatch") and isinstance(got, list):
        rx = re.compile(substitute(test["value"], lab))
        hits = [s for s in got if isinstance(s, str) and rx.search(s)]
        shown = coarse(hits[0], known) if hits else ("no match among %d" % len(got))
    elif test["op"] in ("match", "nomatch") and isinstance(got, str):
        shown = "matched" if re.search(substitute(test["value"], lab), got) else "no match"
    else:
        shown = coarse(got, known)
    return judge(test["op"], got, test["value"], lab), shown


def telling(seen_counts):
    """Of the values seen instead of the expected one: the highest level when they are levels
    (a scenario is judged by its worst moment), else the most frequent (stable from run to run)."""
    if not seen_counts:
        return None
    levels = [v for v in seen_counts if v in LEVELS]
    if levels and len(levels) == len(seen_counts):
        return max(levels, key=LEVELS.index)
    return max(seen_counts, key=lambda k: (seen_counts[k], k))


def uses_text(test):
    return any(uses_text(t) for t in test.get("any") or test.get("all") or []) or test.get("subject") == "text"


def evaluate(expectations, polls, lab, phase_starts):
    """[{label, when, held, seen}] over the polls [(t, phase, doc, text)]."""
    out = []
    for e in expectations:
        label = e.get("label") or ("%s %s" % (e["when"], describe(e["test"])))
        if e.get("only_if"):
            label += " whenever " + describe(e["only_if"])
        mine = [p for p in polls if p[1] == e["phase"]]
        if e["when"] == "eventually" and e.get("within") is not None:
            mine = [p for p in mine if p[0] - phase_starts[e["phase"]] <= e["within"]]
            label += " within %g s" % e["within"]
        seen_counts = {}  # rendering -> polls; the scoreboard shows the most telling one
        held, considered = None, 0
        for t, phase, doc, text in mine:
            if text is None and uses_text(e["test"]):
                continue  # the text report is fetched every few polls only
            if e.get("only_if") and not evaluate_test(e["only_if"], doc, text, lab)[0]:
                continue
            considered += 1
            ok, shown = evaluate_test(e["test"], doc, text, lab)
            if e["when"] == "eventually" and ok:
                held = True
                break
            if e["when"] == "eventually" or not ok:  # what the daemon said instead
                seen_counts[shown] = seen_counts.get(shown, 0) + 1
        if e["when"] == "eventually":
            held = bool(held)
        else:
            held = not seen_counts and (considered > 0 or bool(e.get("only_if")))
        seen = None if held else telling(seen_counts) or "no poll in phase %s" % e["phase"]
        out.append({"label": label, "when": e["when"], "held": held, "seen": seen, "polls": considered})
    return out


# --- One scenario -----------------------------------------------------------------------------
def load(name_or_path):
    path = name_or_path if name_or_path.endswith(".py") else os.path.join(HERE, "scenarios", name_or_path + ".py")
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location("scenario_" + name.replace("-", "_"), path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.NAME = name
    return mod


def all_names():
    return sorted(os.path.splitext(os.path.basename(p))[0] for p in glob.glob(os.path.join(HERE, "scenarios", "*.py")))


def missing_prerequisite(mod):
    if os.geteuid() != 0:
        return "needs root"
    if not os.path.isdir(labmod.V1 + "/"):
        return "needs the v1 memory hierarchy at %s" % labmod.V1
    if not os.path.isdir(labmod.V2):
        return "needs the cgroup2 mount at %s (PSI twins)" % labmod.V2
    if not os.path.exists("/proc/pressure/memory"):
        return "needs PSI"
    if not os.access(MEMDIAGD, os.X_OK):
        return "no daemon at %s (set MEMDIAGD)" % MEMDIAGD
    for tool in getattr(mod, "TOOLS", ()):
        if not any(os.access(os.path.join(d, tool), os.X_OK) for d in os.environ.get("PATH", "").split(":")):
            return "needs %s" % tool
    return None


def node_some_avg10():
    with open("/proc/pressure/memory") as f:
        for line in f:
            if line.startswith("some "):
                return float(line.split("avg10=")[1].split()[0])
    return 0.0


def node_some_total_us():
    with open("/proc/pressure/memory") as f:
        for line in f:
            if line.startswith("some "):
                return int(line.split("total=")[1])
    return 0


def node_stall_share(seconds):
    """The share of the next `seconds` in which some task waited for memory (node PSI)."""
    a, t = node_some_total_us(), time.monotonic()
    time.sleep(seconds)
    return (node_some_total_us() - a) / 1e6 / (time.monotonic() - t)


def run(mod, verbose=False):
    result = {"scenario": mod.NAME, "finding": mod.FINDING, "what": mod.WHAT, "expected": mod.EXPECTED,
              "binary": MEMDIAGD, "status": "error", "checks": [], "notes": []}
    started = time.monotonic()
    reason = missing_prerequisite(mod)
    if reason:
        result["status"] = "skipped"
        result["notes"].append(reason)
        return result
    labmod.sweep_stale()
    lab = labmod.Lab()
    daemon = None
    try:
        # Start on a calm node, or say it was not: node memory PSI "some" over the last second
        # (not avg10, which keeps an earlier scenario's stall for tens of seconds after it ended).
        deadline = time.monotonic() + 15
        while True:
            stalled = node_stall_share(1.0)
            if stalled < 0.02 or time.monotonic() > deadline:
                break
        if stalled >= 0.02:
            result["notes"].append("node memory stalled %.0f %% of the second before the start: something else "
                                   "presses on memory" % (100 * stalled))
        mod.prepare(lab)
        daemon = Daemon(lab.tmp, getattr(mod, "CONFIG", ""))
        daemon.wait_ready()
        polls, phase_starts = [], {}
        want_text = getattr(mod, "TEXT", False)
        for phase, seconds, action in mod.PHASES:
            phase_starts[phase] = time.monotonic()
            if action:
                action(lab)
            end = phase_starts[phase] + seconds
            n = 0
            while time.monotonic() < end:
                t = time.monotonic()
                doc = daemon.diagnosis()
                if getattr(mod, "METRICS", False):
                    doc["_metric_cgroup_forecasts"] = daemon.cgroup_forecasts()
                text = daemon.text() if want_text and n % 4 == 3 else None
                polls.append((t, phase, doc, text))
                n += 1
                if verbose:
                    print("%5.1f %-8s node=%s cgroups=%s overcommit=%s next=%s" % (
                        t - started, phase, (doc.get("stall", {}).get("level") or {}).get("name"),
                        [(lab.logical(c["cgroup"]), c["level"]["name"]) for c in doc.get("cgroups") or []
                         if c["cgroup"].startswith("/" + lab.tag)],
                        ((doc.get("overcommit") or {}).get("level") or {}).get("name"),
                        [logical_text(s, lab)[:50] for s in (doc.get("next_steps") or [])[:3]]) +
                          (" forecasts=%s" % {lab.logical(k): round(v) for k, v in doc["_metric_cgroup_forecasts"].items()}
                           if "_metric_cgroup_forecasts" in doc else ""), flush=True)
                time.sleep(max(0.0, POLL_SECONDS - (time.monotonic() - t)))
            if getattr(mod, "after_phase", None):
                mod.after_phase(lab, phase)
            # What the kernel said of each cgroup meanwhile (results only, not the scoreboard).
            psi = ["%s %s" % (c.name, c.psi_some_avg10()) for c in lab._cgroups if c.v2]
            if psi:
                lab.notes.append("end of %s: PSI some avg10 %% %s; node %s" % (phase, ", ".join(psi), node_some_avg10()))
        if want_text:  # the text of the last moment, once more, for checks on the text
            polls.append((time.monotonic(), mod.PHASES[-1][0], daemon.diagnosis(), daemon.text()))
        result["checks"] = evaluate(mod.EXPECT, polls, lab, phase_starts)
        result["status"] = "passed" if all(c["held"] for c in result["checks"]) else "failed"
        result["notes"] += lab.notes
    except Exception:
        result["notes"].append("scenario broke: " + traceback.format_exc(limit=3).strip().splitlines()[-1])
        traceback.print_exc()
        result["notes"] += lab.notes
    finally:
        if daemon:
            daemon.close()
        lab.close()
    result["seconds"] = round(time.monotonic() - started, 1)
    return result


def default_results_dir():
    return os.environ.get("MEMDIAG_SCENARIO_RESULTS") or os.path.join(REPO, "build", "tests", "scenarios", "results")


def print_result(r):
    print("== %s (%s): %s in %.1f s" % (r["scenario"], r["finding"], r["status"].upper(), r.get("seconds", 0)))
    for c in r["checks"]:
        print("   %s %s%s" % ("ok  " if c["held"] else "FAIL", c["label"],
                              "" if c["held"] else "   [seen: %s]" % c["seen"]))
    for n in r["notes"]:
        print("   note: %s" % n)
    sys.stdout.flush()


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenarios", nargs="*")
    ap.add_argument("--results", default=default_results_dir())
    ap.add_argument("--scoreboard", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args(argv[1:])
    os.makedirs(a.results, exist_ok=True)
    statuses = []
    for name in a.scenarios or all_names():
        mod = load(name)
        r = run(mod, a.verbose)
        with open(os.path.join(a.results, mod.NAME + ".json"), "w") as f:
            json.dump(r, f, indent=1)
        print_result(r)
        statuses.append(r["status"])
    if a.scoreboard:
        import scoreboard
        scoreboard.main(["scoreboard", "--results", a.results, "--write"])
    if any(s in ("failed", "error") for s in statuses):
        return 1
    if "skipped" in statuses:
        if os.environ.get("MEMDIAG_REQUIRE_ALL") == "1":
            print("MEMDIAG_REQUIRE_ALL=1 and a scenario was skipped", file=sys.stderr)
            return 1
        return SKIPPED
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
