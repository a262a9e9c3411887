#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds memdiag twice and runs every test:
#   build/      g++, RelWithDebInfo: unit, end-to-end (real daemon, promtool, Prometheus), bench smoke
#   build-asan/ clang with ASan+UBSan: unit, end-to-end against the sanitized daemon, and the
#               libFuzzer targets for a few seconds each
#   build-windows/ mingw-w64 cross-build (windows/cross/build-and-test.sh): the portable and
#               Win32 tests under wine; the third-party libraries are cached outside the checkout
#   VM stage    the .deb made from build/ installed into a Debian guest under systemd on cgroup
#               v2, booted under qemu (TCG) on Debian's 6.1 and 6.12 kernels, scenarios inside
#               (tests/vm/run_vm_scenarios.py); the guest image is cached outside the checkout
# Exits non-zero if anything fails. Expects deploy/install-deps.sh --test to have run.
# ctest runs two tests at a time; tests that must not overlap (node memory pressure and PSI,
# tracefs mounts, top-N process checks) say so with RESOURCE_LOCK in their CMakeLists.txt.
# MEMDIAG_REQUIRE_ALL=1 (.ci/run sets it) makes any skipped test a failure: the CI machine has
# everything the tests need, so a skip there is a test that silently did not run.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

run_ctest() {
  local log status=0
  log=$(mktemp)
  ctest -j 2 --output-on-failure "$@" 2>&1 | tee "$log" || status=$?
  if [[ ${MEMDIAG_REQUIRE_ALL:-0} == 1 ]] && grep -q '(Skipped)$' "$log"; then
    echo "run-all: MEMDIAG_REQUIRE_ALL=1 and these tests were skipped:" >&2
    grep '(Skipped)$' "$log" >&2
    status=1
  fi
  rm -f "$log"
  return "$status"
}

echo "== g++ build"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMEMDIAG_TESTS=ON
cmake --build build -j "$jobs"
run_ctest --test-dir build

echo "== clang ASan+UBSan build with fuzzers"
CC=clang CXX=clang++ cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DMEMDIAG_SANITIZE=ON -DMEMDIAG_FUZZ=ON -DMEMDIAG_TESTS=ON
cmake --build build-asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  run_ctest --test-dir build-asan -L 'unit|e2e|fuzz'

echo "== Windows: cross-built with mingw-w64, tests under wine"
windows/cross/build-and-test.sh build-windows

echo "== VM: the .deb under systemd on cgroup v2, on Debian's 6.1 and 6.12 kernels (qemu TCG)"
python3 tests/vm/run_vm_scenarios.py build

echo "== all tests passed"
