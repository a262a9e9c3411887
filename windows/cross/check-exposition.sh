#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Windows exposition through promtool: the test binary (under wine) renders the Windows
# sources' snapshot with the real exporter and writes it out; `promtool check metrics` on the
# Linux host must report nothing (ctest test windows_exposition_promtool).
#   windows/cross/check-exposition.sh memdiag_windows_tests.exe
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$(mktemp --suffix=.prom)"
trap 'rm -f "$out"' EXIT
MEMDIAG_EXPOSITION_OUT="$out" WINEDEBUG=-all "$here/wine-run.sh" "$1" --gtest_filter='WindowsExposition.*' --gtest_brief=1
[[ -s $out ]] || { echo "check-exposition: the test wrote no exposition" >&2; exit 1; }
echo "check-exposition: $(grep -vc '^#' "$out") samples"
problems="$(promtool check metrics <"$out" 2>&1)" || true
if [[ -n $problems ]]; then
  echo "check-exposition: promtool check metrics reports:" >&2
  echo "$problems" >&2
  exit 1
fi
