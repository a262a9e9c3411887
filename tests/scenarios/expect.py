# SPDX-License-Identifier: Apache-2.0
"""The vocabulary scenarios declare their verdicts in: plain data, read by runner.py.

A check names a scope, a subject in it, an operator and a value:

    check("node", "level", "<=", "low")
    check("/small", "processes", "has", "job:thrash")      # the pid of the scenario's job
    check("report", "next_steps", "nomatch", r"Stop or limit /bigidle")

Scopes: "node" and cgroup paths as the scenario names them ("/small") are stall scopes;
"overcommit", "promises", "breaking" and "report" are the other sections. The subjects each
scope has, and where each is in the daemon's JSON, are in runner.py (SUBJECTS): the one place
that maps this vocabulary onto the JSON.

Operators: "<=" ">=" "==" (levels by name, or numbers), "has" / "lacks" (a list holds the
value, or every value of a list value / none of them), "nonempty" / "empty" (a missing list is
empty), "match" / "nomatch" (a regex over a string, or over each string of a list; "{pid:job}"
in it stands for a job's pid), "true" / "false"; "has_item" (a list of objects holds one whose
fields match the value's: runner.match_item).

An expectation wraps a check (or any_of / all_of several, judged on the same poll):

    eventually(test, phase="observe", within=None)  holds in at least one poll of the phase
                                                     (within: seconds from the phase's start)
    always(test, phase="observe", only_if=None)     holds in every poll of the phase (only_if:
                                                     in every poll where that check holds)
"""


def check(scope, subject, op, value=None):
    return {"scope": scope, "subject": subject, "op": op, "value": value}


def any_of(*tests):
    return {"any": list(tests)}


def all_of(*tests):
    return {"all": list(tests)}


def eventually(test, phase="observe", within=None, label=None):
    return {"when": "eventually", "test": test, "phase": phase, "within": within, "label": label}


def always(test, phase="observe", only_if=None, label=None):
    return {"when": "always", "test": test, "phase": phase, "only_if": only_if, "label": label}


# Shorthands for what most scenarios say.
def level_at_most(scope, level, **kw):
    return always(check(scope, "level", "<=", level), **kw)


def level_at_least(scope, level, **kw):
    return eventually(check(scope, "level", ">=", level), **kw)


def no_step(regex, **kw):
    return always(check("report", "next_steps", "nomatch", regex), **kw)


def calm(scope, **kw):
    """Benign: level none or low, no roles, in every poll."""
    return [always(check(scope, "level", "<=", "low"), **kw),
            always(check(scope, "contributors", "empty"), **kw),
            always(check(scope, "victims", "empty"), **kw)]
