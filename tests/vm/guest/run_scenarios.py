#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Inside the guest: installs the .deb the host put on the data disk, then runs each scenario
module named on the command line (scenarios/NAME.py, a `run(lab)` function), and writes
out/results.json: per scenario its status (pass, fail, error), its checks with what was seen,
and its time. A scenario that raises is an error with its traceback; the rest still run."""
import importlib.util
import json
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lab import Lab  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def main(names, out):
    results = {"kernel": os.uname().release, "scenarios": {}}
    for name in names:
        lab = Lab(name)
        started = time.monotonic()
        status = "pass"
        error = None
        try:
            spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, "scenarios", name + ".py"))
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            module.run(lab)
        except Exception:  # a scenario's crash is its error, not the run's end
            status = "error"
            error = traceback.format_exc()
            print(error, flush=True)
        finally:
            lab.stop_all()
        if status == "pass" and (not lab.checks or not all(c["ok"] for c in lab.checks)):
            status = "fail"
        results["scenarios"][name] = {"status": status, "checks": lab.checks, "error": error,
                                      "seconds": round(time.monotonic() - started, 1)}
        with open(out, "w") as f:
            json.dump(results, f, indent=1)
    return 0 if all(s["status"] == "pass" for s in results["scenarios"].values()) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[2:], sys.argv[1]))
