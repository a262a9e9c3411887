#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Windows stage of the test suite (tests/run-all.sh; docs/windows.md): the third-party
# libraries (cached outside the checkout by build-deps.sh), memdiag cross-built with mingw-w64
# into build-windows/, and its tests run under wine.
#   windows/cross/build-and-test.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
build="${1:-build-windows}"
here=windows/cross

"$here/build-deps.sh"
deps="${MEMDIAG_WINDOWS_DEPS:-/var/cache/memdiag/windows-deps}"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE="$PWD/$here/mingw-toolchain.cmake" -DCMAKE_PREFIX_PATH="$deps" \
  -DCMAKE_CROSSCOMPILING_EMULATOR="$PWD/$here/wine-run.sh"
cmake --build "$build" -j "$(nproc)"
# No tests found is a failure: a stage that quietly registers nothing must not pass.
ctest --test-dir "$build" --output-on-failure --no-tests=error
