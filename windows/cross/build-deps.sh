#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Cross-builds, statically and with mingw-w64, the third-party libraries of memdiag's Windows
# build (fmt, spdlog, yaml-cpp, googletest + gmock, prometheus-cpp's core) from Debian bookworm
# source packages, because Debian ships no mingw builds of them.
#
# Usage: windows/cross/build-deps.sh [PREFIX]
#   PREFIX defaults to $MEMDIAG_WINDOWS_DEPS or /var/cache/memdiag/windows-deps and receives
#   include/, lib/ and lib/cmake/. Downloads, build trees and logs go to PREFIX-work.
# Consumers: cmake -G Ninja -DCMAKE_TOOLCHAIN_FILE=windows/cross/mingw-toolchain.cmake
#            -DCMAKE_PREFIX_PATH=PREFIX ...
# A stamp in PREFIX records what was built; when it matches, the run ends at once.
set -euo pipefail

# Pinned so that a warm run can decide without the network and every machine builds the same
# code. A bookworm point release can replace one: the fetch step then names the new version.
declare -A debian_version=(
  [fmtlib]="9.1.0+ds1-2"
  [spdlog]="1:1.10.0+ds-0.4"
  [yaml-cpp]="0.7.0+dfsg-8"
  [googletest]="1.12.1-0.2"
  [prometheus-cpp]="1.0.1-1"
)
# Build order: spdlog needs fmt.
source_packages=(fmtlib spdlog yaml-cpp googletest prometheus-cpp)
tool_packages=(dpkg-dev cmake ninja-build g++-mingw-w64-x86-64-posix)

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
script="$here/$(basename "${BASH_SOURCE[0]}")"
toolchain="$here/mingw-toolchain.cmake"

case "${1:-}" in
  -h | --help)
    sed -n '2,11s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
    exit 0
    ;;
esac
(($# <= 1)) || { echo "usage: $0 [PREFIX]" >&2; exit 2; }

prefix="$(realpath -m "${1:-${MEMDIAG_WINDOWS_DEPS:-/var/cache/memdiag/windows-deps}}")"
work="$prefix-work"
stamp="$prefix/memdiag-windows-deps.stamp"
logs="$work/logs"
stage="$work/stage"
mingw_version=""

say() { printf 'build-deps: %s\n' "$*"; }
die() { say "$*" >&2; exit 1; }

# Runs a step with its output appended to a log; on failure shows the log's tail.
run_logged() {
  local log="$1"
  shift
  printf '+ %s\n' "$*" >>"$log"
  if ! "$@" >>"$log" 2>&1; then
    say "failed: $*" >&2
    say "last lines of $log:" >&2
    tail -n 40 "$log" >&2
    exit 1
  fi
}

upstream_version() {
  local v="${1#*:}"
  v="${v%-*}"
  printf '%s\n' "${v%%+*}"
}

library_name() {
  case "$1" in
    fmtlib) echo fmt ;;
    *) echo "$1" ;;
  esac
}

# dpkg-query rather than apt: a warm run must not touch apt at all.
ensure_tools() {
  local listing p
  local -a missing=()
  listing="$(dpkg-query -W -f='${Package} ${Status} ${Version}\n' "${tool_packages[@]}" 2>/dev/null || true)"
  for p in "${tool_packages[@]}"; do
    grep -q "^$p install ok installed " <<<"$listing" || missing+=("$p")
  done
  if ((${#missing[@]} > 0)); then
    [[ $(id -u) -eq 0 ]] || die "need root to install: ${missing[*]}"
    mkdir -p "$logs"
    say "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    run_logged "$logs/apt-install.log" apt-get update -qq
    run_logged "$logs/apt-install.log" apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
  mingw_version="$(dpkg-query -W -f='${Version}' g++-mingw-w64-x86-64-posix)"
}

expected_stamp() {
  local p
  echo "# memdiag Windows dependencies; delete this file to force a rebuild"
  for p in "${source_packages[@]}"; do
    echo "source $p ${debian_version[$p]}"
  done
  echo "compiler g++-mingw-w64-x86-64-posix $mingw_version"
  echo "recipe $(cat "$script" "$toolchain" | sha256sum | cut -d' ' -f1)"
}

# The config files too: a stamp next to a half-deleted prefix must not count.
is_cached() {
  local f
  [[ -f "$stamp" && "$(<"$stamp")" == "$(expected_stamp)" ]] || return 1
  for f in fmt/fmt-config.cmake spdlog/spdlogConfig.cmake yaml-cpp/yaml-cpp-config.cmake \
    GTest/GTestConfig.cmake; do
    [[ -f "$prefix/lib/cmake/$f" ]] || return 1
  done
}

report_cached() {
  local p
  local -a built=()
  for p in "${source_packages[@]}"; do
    built+=("$(library_name "$p") $(upstream_version "${debian_version[$p]}")")
  done
  local joined
  joined="$(printf '%s, ' "${built[@]}")"
  say "cached in $prefix: ${joined%, } (delete $stamp to rebuild)"
}

dsc_path() {
  local p="$1" v="${debian_version[$1]}"
  printf '%s/downloads/%s_%s.dsc\n' "$work" "$p" "${v#*:}"
}

# Own sources file and lists directory: the machine's apt configuration stays untouched and
# needs no deb-src line. Downloads land in a temporary directory first, so that an
# interrupted download never passes for a complete one next time.
fetch_sources() {
  local p tmp log="$logs/fetch.log" start="$SECONDS"
  local -a wanted=()
  for p in "${source_packages[@]}"; do
    [[ -f "$(dsc_path "$p")" ]] || wanted+=("$p=${debian_version[$p]}")
  done
  ((${#wanted[@]} > 0)) || return 0

  local apt_dir="$work/apt"
  mkdir -p "$apt_dir/sources" "$apt_dir/lists/partial" "$apt_dir/cache" "$work/downloads"
  cat >"$apt_dir/sources/debsrc.sources" <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  local -a apt_opts=(
    -o "Dir::Etc::SourceList=$apt_dir/sources/debsrc.sources"
    -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$apt_dir/lists"
    -o "Dir::Cache=$apt_dir/cache"
    -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=
  )
  tmp="$(mktemp -d "$work/downloads.XXXXXX")"
  # apt drops privileges to _apt for downloads; it needs to write there.
  if [[ $(id -u) -eq 0 ]] && getent passwd _apt >/dev/null; then
    chown _apt "$tmp"
  fi
  run_logged "$log" apt-get "${apt_opts[@]}" update
  printf '+ (cd %s) apt-get source --download-only %s\n' "$tmp" "${wanted[*]}" >>"$log"
  if ! (cd "$tmp" && apt-get "${apt_opts[@]}" source --download-only "${wanted[@]}") >>"$log" 2>&1; then
    say "failed to download ${wanted[*]}; tail of $log:" >&2
    tail -n 15 "$log" >&2
    for p in "${source_packages[@]}"; do
      say "$p: pinned ${debian_version[$p]}, bookworm has" \
        "$(apt-cache "${apt_opts[@]}" showsrc "$p" 2>/dev/null | sed -n 's/^Version: //p' | paste -sd' ')" >&2
    done
    rm -rf "$tmp"
    exit 1
  fi
  mv "$tmp"/* "$work/downloads/"
  rmdir "$tmp"
  say "fetched ${wanted[*]} in $((SECONDS - start)) s"
}

build_library() {
  local p="$1"
  shift
  local name version src bld log start="$SECONDS"
  name="$(library_name "$p")"
  version="$(upstream_version "${debian_version[$p]}")"
  src="$work/src/$p"
  bld="$work/build/$p"
  log="$logs/$p.log"
  rm -rf "$src" "$bld"
  mkdir -p "$work/src"
  : >"$log"
  # dpkg-source applies Debian's patches (spdlog's external fmt, gtest/gmock CMake packages).
  run_logged "$log" dpkg-source -x "$(dsc_path "$p")" "$src"
  # CMAKE_PREFIX_PATH is the staging tree: the live prefix may hold older versions.
  run_logged "$log" cmake -S "$src" -B "$bld" -G Ninja -Wno-dev \
    -DCMAKE_TOOLCHAIN_FILE="$toolchain" \
    -DCMAKE_BUILD_TYPE=Release \
    -DBUILD_SHARED_LIBS=OFF \
    -DCMAKE_INSTALL_PREFIX="$prefix" \
    -DCMAKE_INSTALL_LIBDIR=lib \
    -DCMAKE_INSTALL_INCLUDEDIR=include \
    -DCMAKE_PREFIX_PATH="$stage$prefix" \
    "$@"
  run_logged "$log" cmake --build "$bld"
  # DESTDIR keeps the real prefix in the installed .pc and CMake files.
  run_logged "$log" env DESTDIR="$stage" cmake --install "$bld"
  say "built $name $version ($p ${debian_version[$p]}) in $((SECONDS - start)) s"
}

# Only a prefix this script made may be replaced: an empty or missing one, or one with a stamp.
check_prefix_is_ours() {
  if [[ -d "$prefix" && ! -f "$stamp" && -n "$(ls -A "$prefix")" ]]; then
    die "$prefix is not empty and has no $(basename "$stamp"); not replacing it"
  fi
}

# The whole prefix is swapped, so files of an older version never linger beside new ones.
publish_stage() {
  local old=""
  expected_stamp >"$stage$prefix/$(basename "$stamp")"
  if [[ -e "$prefix" ]]; then
    old="$(mktemp -d "$prefix.old.XXXXXX")"
    mv "$prefix" "$old/"
  fi
  mkdir -p "$(dirname "$prefix")"
  mv "$stage$prefix" "$prefix"
  if [[ -n "$old" ]]; then
    rm -rf "$old"
  fi
  rm -rf "$stage"
}

main() {
  local start="$SECONDS"
  ensure_tools
  if is_cached; then
    report_cached
    return 0
  fi
  check_prefix_is_ours
  mkdir -p "$logs"
  # Two builds at once would share the work directory.
  exec 9>"$work/lock"
  flock 9
  if is_cached; then
    report_cached
    return 0
  fi

  fetch_sources
  rm -rf "$stage"
  build_library fmtlib -DFMT_DOC=OFF -DFMT_TEST=OFF -DFMT_FUZZ=OFF -DFMT_INSTALL=ON
  build_library spdlog -DSPDLOG_FMT_EXTERNAL=ON -DSPDLOG_BUILD_SHARED=OFF -DSPDLOG_INSTALL=ON \
    -DSPDLOG_BUILD_EXAMPLE=OFF -DSPDLOG_BUILD_EXAMPLE_HO=OFF \
    -DSPDLOG_BUILD_TESTS=OFF -DSPDLOG_BUILD_TESTS_HO=OFF -DSPDLOG_BUILD_BENCH=OFF
  build_library yaml-cpp -DYAML_BUILD_SHARED_LIBS=OFF -DYAML_CPP_INSTALL=ON \
    -DYAML_CPP_BUILD_TESTS=OFF -DYAML_CPP_BUILD_TOOLS=OFF -DYAML_CPP_BUILD_CONTRIB=OFF
  build_library googletest -DBUILD_GMOCK=ON -DINSTALL_GTEST=ON -Dgtest_disable_pthreads=OFF \
    -Dgtest_build_tests=OFF -Dgtest_build_samples=OFF -Dgmock_build_tests=OFF
  # Only prometheus-cpp's core (metric families, the text serializer): memdiag serves HTTP itself.
  build_library prometheus-cpp -DENABLE_PULL=OFF -DENABLE_PUSH=OFF -DENABLE_COMPRESSION=OFF \
    -DENABLE_TESTING=OFF -DUSE_THIRDPARTY_LIBRARIES=OFF -DGENERATE_PKGCONFIG=OFF
  publish_stage
  say "installed into $prefix in $((SECONDS - start)) s (logs: $logs)"
}

main
