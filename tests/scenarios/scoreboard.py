# SPDX-License-Identifier: Apache-2.0
"""The diagnosis scoreboard, docs/diagnosis-scoreboard.md: one row per live scenario (what it does,
the verdict a correct tool gives, the verdict the daemon gave, pass or fail), made from the
results runner.py wrote. In coarse, stable terms: levels by name, cgroups by the scenario's
names, no byte counts, so the same daemon gives the same table.

    python3 tests/scenarios/scoreboard.py --results DIR --check   # differs from the file: exit 1
    python3 tests/scenarios/scoreboard.py --results DIR --write   # regenerate the file

A failing scenario fails its own test; here it is a row whose "given" says what the daemon
said instead, and the table only has to match what is checked in."""
import argparse
import difflib
import json
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
DOC = os.path.join(REPO, "docs", "diagnosis-scoreboard.md")
sys.path.insert(0, HERE)

HEADER = """# Diagnosis scoreboard

What `memdiagd` concludes in live scenarios on a real machine, against what a correct diagnosis
says. Each scenario (tests/scenarios/scenarios/) builds its case in v1 memory cgroups with
limits (cgroup2 twins for PSI), runs the real daemon (sampler every 500 ms, the shipped defaults
otherwise), polls `/api/v1/diagnosis` every 0.5 s, and judges every poll against the verdict it
declares: "eventually" must hold in at least one poll after the scenario settled, "always" in
every poll it observed. The scenarios are ctest tests (`ctest --test-dir build -R scenario_`,
label e2e, release build); a failing scenario fails its own test, and this table records what
the daemon said instead. `scenario_scoreboard` fails when this file differs from the table the
last run regenerates.

Regenerate it (root; about 8 minutes):

    ctest --test-dir build -R scenario_ ; python3 tests/scenarios/scoreboard.py --results build/tests/scenarios/results --write

or, without ctest: `MEMDIAGD=build/bin/memdiagd python3 tests/scenarios/runner.py --scoreboard`.
Levels: none < low < medium < high < critical. "(another cgroup)" is a cgroup of the machine
outside the scenario; "job:x" is the pid of the scenario's job x; `#` stands for a number.

"""


def cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def given(r):
    status = r.get("status")
    if status == "passed":
        return "as expected"
    if status == "skipped":
        return "not run: " + "; ".join(r.get("notes") or [])
    if status == "error":
        broke = [n for n in r.get("notes") or [] if n.startswith("scenario broke")]
        return broke[0] if broke else "the scenario broke"
    failed = [c for c in r.get("checks") or [] if not c["held"]]
    return "; ".join("%s: seen %s" % (c["label"], c["seen"]) for c in failed)


def render(results_dir, names):
    rows, missing = [], []
    for name in names:
        path = os.path.join(results_dir, name + ".json")
        if not os.path.exists(path):
            missing.append(name)
            continue
        with open(path) as f:
            r = json.load(f)
        result = {"passed": "pass", "failed": "**fail**", "skipped": "skipped", "error": "**broke**"}[r["status"]]
        rows.append("| %s | %s | %s | %s | %s | %s |" % (
            cell(name), cell(r["finding"]), cell(r["what"]), cell(r["expected"]), cell(given(r)), result))
    table = ["| Scenario | Finding | What it does | Verdict expected | Verdict given | Result |",
             "|---|---|---|---|---|---|"] + rows
    return HEADER + "\n".join(table) + "\n", missing


def main(argv):
    import runner
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", default=runner.default_results_dir())
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--write", action="store_true")
    a = ap.parse_args(argv[1:])
    text, missing = render(a.results, runner.all_names())
    if missing:
        print("scoreboard: no result in %s for: %s (run them: ctest --test-dir build -R scenario_)" %
              (a.results, ", ".join(missing)), file=sys.stderr)
        return 1
    if a.write:
        os.makedirs(os.path.dirname(DOC), exist_ok=True)
        with open(DOC, "w") as f:
            f.write(text)
        print("scoreboard: wrote %s" % DOC)
        return 0
    current = open(DOC).read() if os.path.exists(DOC) else ""
    if current == text:
        print("scoreboard: %s matches the results in %s" % (os.path.relpath(DOC, REPO), a.results))
        return 0
    sys.stdout.writelines(difflib.unified_diff(current.splitlines(True), text.splitlines(True),
                                               "docs/diagnosis-scoreboard.md (checked in)",
                                               "regenerated from " + a.results))
    print("\nscoreboard: docs/diagnosis-scoreboard.md differs from what the scenarios gave; if the new "
          "verdicts are the intended ones, regenerate it:\n    python3 tests/scenarios/scoreboard.py --results %s "
          "--write" % a.results)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
