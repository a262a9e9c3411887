#!/usr/bin/env bash
# Builds memdiag twice and runs every test:
#   build/      g++, RelWithDebInfo: unit, end-to-end (real daemon, promtool, Prometheus), bench smoke
#   build-asan/ clang with ASan+UBSan: unit, end-to-end against the sanitized daemon, and the
#               libFuzzer targets for a few seconds each
# Exits non-zero if anything fails. Expects deploy/install-deps.sh to have run.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

echo "== g++ build"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure

echo "== clang ASan+UBSan build with fuzzers"
CC=clang CXX=clang++ cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DMEMDIAG_SANITIZE=ON -DMEMDIAG_FUZZ=ON
cmake --build build-asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -L 'unit|e2e|fuzz'

echo "== all tests passed"
