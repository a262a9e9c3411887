#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the guest's root file system image from Debian packages (mmdebstrap: systemd as PID 1,
# cgroup v2 unified, journald, systemd-oomd, Prometheus, curl, python3, and the libraries the
# .deb needs),
# as an ext4 image, cached outside the checkout and rebuilt only when this recipe (this file,
# the runner, the unit) or the package list changes.
# Debian's kernels are installed into the guest too (linux-image-amd64: 6.1, Debian 12's own;
# linux-image-6.12-amd64), so their initramfs is made inside it and the host's /boot is never
# touched: each kernel and its initrd are copied out next to the image, into IMAGE.boot/.
#   tests/vm/build-guest-image.sh [EXTRA_PACKAGES...]   prints the image's path
# EXTRA_PACKAGES: the .deb's Depends (run-vm.sh passes them), part of the cache key.
# The cache: $MEMDIAG_VM_CACHE (default /var/cache/memdiag/vm).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${MEMDIAG_VM_CACHE:-/var/cache/memdiag/vm}"
packages=(systemd-sysv systemd-oomd udev kmod dbus procps curl python3 initramfs-tools prometheus
          linux-image-amd64 linux-image-6.12-amd64 "$@")
key=$( { cat "$here/build-guest-image.sh" "$here/guest-runner.sh"; printf '%s\n' "${packages[@]}" | sort -u; } \
       | sha256sum | cut -c1-16)
image="$cache/guest-$key.img"
if [[ -s $image && -d $cache/guest-$key.boot ]]; then
  echo "$image"
  exit 0
fi
mkdir -p "$cache"
# Images of older recipes go: each is a few hundred MB.
rm -rf "$cache"/guest-*.img "$cache"/guest-*.boot "$cache"/build.*
work=$(mktemp -d "$cache/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
include=$(printf '%s\n' "${packages[@]}" | sort -u | paste -sd, -)
# minbase: no recommends, no docs beyond what dpkg keeps; the host's apt sources name the archive.
# Prometheus is installed but not started at boot: the install scenario starts it to scrape the
# daemon, and the other scenarios keep the guest's two CPUs to themselves.
mmdebstrap --variant=minbase --include="$include" \
  --customize-hook='echo memdiag-guest > "$1/etc/hostname"' \
  --customize-hook='printf "/dev/vda / ext4 defaults 0 1\n" > "$1/etc/fstab"' \
  --customize-hook='passwd --root "$1" -d root' \
  --customize-hook="install -m 0755 '$here/guest-runner.sh' \"\$1/usr/local/sbin/memdiag-vm-run\"" \
  --customize-hook='printf "%s\n" "[Unit]" "Description=Run the memdiag VM scenarios from the data disk" \
      "After=multi-user.target" "[Service]" "Type=oneshot" "ExecStart=/usr/local/sbin/memdiag-vm-run" \
      "StandardOutput=journal+console" "[Install]" "WantedBy=multi-user.target" \
      > "$1/etc/systemd/system/memdiag-vm-run.service"' \
  --customize-hook='chroot "$1" systemctl enable memdiag-vm-run.service' \
  --customize-hook='chroot "$1" systemctl disable prometheus.service' \
  --customize-hook='chroot "$1" systemctl mask systemd-timesyncd.service apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer 2>/dev/null || true' \
  bookworm "$work/root" >&2
mkdir "$work/boot"
cp "$work"/root/boot/vmlinuz-* "$work"/root/boot/initrd.img-* "$work/boot/"
# 4 GiB sparse: the root holds ~1.2 GB (two kernels' modules); the rest is room for the .deb and
# the scenarios' files.
truncate -s 4G "$work/root.img"
mkfs.ext4 -q -L memdiag-root -d "$work/root" "$work/root.img"
rm -rf "$cache/guest-$key.boot"
mv "$work/boot" "$cache/guest-$key.boot"
mv "$work/root.img" "$image"
echo "$image"
