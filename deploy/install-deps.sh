#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what memdiag needs to build and run, from Debian's archive (bookworm); with --test,
# also everything its tests use (tests/run-all.sh, CI).
# Idempotent: when every package is already present it touches nothing (no apt-get update).
# Run as root (or through sudo).
set -euo pipefail

# What building and running need.
packages=(
  build-essential cmake ninja-build pkg-config python3
  libspdlog-dev libfmt-dev libyaml-cpp-dev prometheus-cpp-dev
  # sd_notify: Type=notify, the watchdog, STATUS= (daemon/systemd_notifier.cpp)
  libsystemd-dev
  # --web.config.file: TLS (OpenSSL) and bcrypt password hashes (libxcrypt's crypt_r)
  libssl-dev libcrypt-dev
  # eBPF (reclaim-stall probe: clang -target bpf, bpftool skeletons, libbpf)
  libbpf-dev bpftool libelf-dev zlib1g-dev clang
)
# --test adds what the tests (tests/run-all.sh) use.
test_packages=(
  git
  # unit, fuzz + sanitizers (clang's libFuzzer and runtimes), benchmarks, end to end
  libgtest-dev libgmock-dev libbenchmark-dev libclang-rt-14-dev
  python3-yaml prometheus prometheus-node-exporter curl procps stress-ng bpftrace
  # the monitoring mixin (deploy/mixin) generates the shipped rules: checked for drift
  jsonnet
  # the certificates of tests/e2e/test_web_config.py
  openssl
  # the portable core compiled for Windows at every build (tests/portability/check_layers.py);
  # the Windows build and its tests under wine (windows/cross: dpkg-source unpacks the
  # third-party libraries' Debian source packages)
  g++-mingw-w64-x86-64-posix wine64 dpkg-dev
  # systemd-analyze verifies the shipped unit (tests/e2e/test_deploy.py), its man: page with man-db
  systemd man-db
  # the daemon without CAP_BPF/CAP_PERFMON, its bpf() calls counted (tests/e2e/test_bpf_privileges.py)
  libcap2-bin strace
  # the status page rendered in a headless browser (tests/e2e/test_status_page.py)
  chromium
  # the other allocators memdiag-alloc-bench compares memdiag's with (LD_PRELOAD)
  libjemalloc2 libmimalloc2.0 libtcmalloc-minimal4
  # the VM stage (tests/vm): a Debian guest built from packages, booted under qemu's TCG on
  # Debian's 6.1 and 6.12 kernels (installed into the guest, not here), read back with debugfs
  qemu-system-x86 qemu-utils mmdebstrap e2fsprogs
)
case "${1:-}" in
  --test) packages+=("${test_packages[@]}") ;;
  "") ;;
  *) echo "usage: deploy/install-deps.sh [--test]" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
  echo "install-deps: need root to install: ${missing[*]}" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
