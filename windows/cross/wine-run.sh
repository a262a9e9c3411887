#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs a Windows program under wine, as ctest's CMAKE_CROSSCOMPILING_EMULATOR for the Windows
# build. Debian's wine64 has no /usr/bin/wine, so the binaries are called by path;
# the prefix lives outside the checkout and is made once (~15 s, ~700 MB); a wineserver kept
# for a minute spares every run the ~5 s of starting one; everything wine leaves running gets
# stdin/stdout on /dev/null, or it holds ctest's pipe open and ctest waits forever.
set -euo pipefail

export WINEPREFIX="${MEMDIAG_WINEPREFIX:-/var/cache/memdiag/wine-prefix}"
export WINEDEBUG="${WINEDEBUG:--all}"
# No Mono or Gecko: nothing here needs .NET or a browser engine, and wine would offer to fetch them.
export WINEDLLOVERRIDES="${WINEDLLOVERRIDES:-mscoree,mshtml=}"
wine=/usr/lib/wine/wine64
server=/usr/lib/wine/wineserver64
[[ -x $wine ]] || { echo "wine-run: $wine not found (Debian package wine64)" >&2; exit 1; }

if [[ ! -f $WINEPREFIX/system.reg ]]; then
  mkdir -p "$(dirname "$WINEPREFIX")"
  (
    flock 9
    if [[ ! -f $WINEPREFIX/system.reg ]]; then
      "$wine" wineboot --init </dev/null >/dev/null 2>&1
      "$server" -w
    fi
  ) 9>"$WINEPREFIX.lock"
fi
# Persistent for 60 s after its last client (one per run would cost ~5 s; one forever would
# outlive the test run); a second one just finds the first.
"$server" -p60 </dev/null >/dev/null 2>&1 || true
# The program's output goes through a file: the processes wine starts beside it (services.exe,
# winedevice.exe) inherit its descriptors and outlive it.
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
status=0
"$wine" "$@" </dev/null >"$out" 2>&1 || status=$?
cat "$out"
exit "$status"
