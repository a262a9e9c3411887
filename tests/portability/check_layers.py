#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Who may include whom (docs/development.md, "Who may include whom"), checked at every build.

1. Every project include ("probes/...", "exporters/...", "daemon/...", "windows/...") of every
   source file is allowed by the layer rules below.
2. The portable layers (probes/core, probes/analysis, probes/recording, windows/figures) include no OS header: their <...>
   includes are all C++ standard library headers.
3. With --cross-compiler (the mingw g++, where installed), every file of the portable layers is
   compiled for Windows on its own: what the two checks above miss (a Linux-only type reached
   through the standard library, a GNU extension) fails there.

Exits 1 naming every file, line and include that breaks a rule.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

# Layer of a file: its longest matching folder prefix. Allowed: the layers it may include.
LAYERS = {
    "probes/core": {"probes/core"},
    "probes/analysis": {"probes/core", "probes/analysis"},
    "probes/recording": {"probes/core", "probes/recording"},
    "probes/linux": {"probes/core", "probes/linux"},
    "probes/bpf": {"probes/core", "probes/linux", "probes/bpf"},
    "probes/canary": {"probes/core", "probes/linux", "probes/canary"},
    "probes/catalog": {"probes/core", "probes/linux", "probes/bpf", "probes/canary", "probes/catalog"},
    # The Win32 layer, the catalog interface its catalog file defines (source_catalog.hpp
    # includes only core), and the canary's portable cycle and allocator (windows/canary).
    "windows": {"probes/core", "probes/analysis", "probes/recording", "probes/catalog", "probes/canary", "windows",
                "windows/figures"},
    # Windows's figures without Win32: portable, so compiled and unit-tested natively on Linux.
    "windows/figures": {"probes/core", "windows/figures"},
    "exporters": {"probes/core", "probes/analysis", "exporters"},
    "daemon": None,  # everything (and nothing includes it)
}
PORTABLE = ("probes/core", "probes/analysis", "probes/recording", "windows/figures")
PROJECT_ROOTS = ("probes/", "exporters/", "daemon/", "windows/")

# The C++20 standard library (with the C library's <c...> forms): nothing else may appear in
# <...> in a portable file.
STANDARD = set("""
algorithm any array atomic barrier bit bitset charconv chrono codecvt compare complex concepts
condition_variable coroutine deque exception execution expected filesystem format forward_list
fstream functional future initializer_list iomanip ios iosfwd iostream istream iterator latch
limits list locale map memory memory_resource mutex new numbers numeric optional ostream queue
random ranges ratio regex scoped_allocator semaphore set shared_mutex source_location span
sstream stack stdexcept stop_token streambuf string string_view syncstream system_error thread
tuple type_traits typeindex typeinfo unordered_map unordered_set utility valarray variant
vector version
cassert cctype cerrno cfenv cfloat cinttypes climits clocale cmath csetjmp csignal cstdarg
cstddef cstdint cstdio cstdlib cstring ctime cuchar cwchar cwctype
""".split())

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
SOURCES = (".hpp", ".cpp", ".h", ".c")


def layer_of(path):
    best = None
    for layer in LAYERS:
        if path == layer or path.startswith(layer + "/"):
            if best is None or len(layer) > len(best):
                best = layer
    return best


def project_layer(include):
    if not include.startswith(PROJECT_ROOTS):
        return None
    return layer_of(os.path.dirname(include)) or include.split("/")[0]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("root")
    parser.add_argument("--cross-compiler", default="")
    parser.add_argument("--cross-only", action="store_true", help="skip the include rules (checked apart)")
    parser.add_argument("--stamp", default="")
    args = parser.parse_args()

    problems = []
    portable_files = []
    for top in ("probes", "exporters", "daemon", "windows"):
        for directory, _, files in os.walk(os.path.join(args.root, top)):
            for name in sorted(files):
                if not name.endswith(SOURCES) or name.endswith(".bpf.c"):
                    continue
                full = os.path.join(directory, name)
                rel = os.path.relpath(full, args.root)
                layer = layer_of(rel)
                if layer is None:
                    continue
                if layer in PORTABLE:
                    portable_files.append(rel)
                allowed = LAYERS[layer]
                if args.cross_only:
                    continue
                with open(full, encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        kind, include = m.groups()
                        target = project_layer(include)
                        if target == "daemon" and layer != "daemon":
                            problems.append(f"{rel}:{number}: includes {include}: nothing includes daemon/")
                        elif target is not None and allowed is not None and target not in allowed:
                            problems.append(f"{rel}:{number}: includes {include}: {layer} may include only "
                                            + ", ".join(sorted(allowed)))
                        elif layer in PORTABLE and kind == "<" and include not in STANDARD:
                            problems.append(f"{rel}:{number}: includes <{include}>: {layer} is portable, "
                                            "standard C++ headers only (no OS header)")

    compiled = 0
    if args.cross_compiler and not problems:
        for rel in portable_files:
            with tempfile.NamedTemporaryFile("w", suffix=".cpp") as unit:
                unit.write(f'#include "{rel}"\n')
                unit.flush()
                result = subprocess.run([args.cross_compiler, "-std=c++20", "-Wall", "-Wextra", "-Werror",
                                         "-fsyntax-only", "-I", args.root, unit.name],
                                        capture_output=True, text=True)
            compiled += 1
            if result.returncode != 0:
                problems.append(f"{rel}: does not compile for Windows ({args.cross_compiler}):\n"
                                + result.stderr.strip())

    if problems:
        print("check_layers: the include rules of docs/development.md are broken:", file=sys.stderr)
        for p in problems:
            print("  " + p, file=sys.stderr)
        return 1
    if args.cross_compiler:
        print(f"check_layers: {compiled} portable files compile for Windows ({os.path.basename(args.cross_compiler)})")
    else:
        print(f"check_layers: include rules hold ({len(portable_files)} portable files)")
    if args.stamp:
        with open(args.stamp, "w") as f:
            f.write("ok\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
