#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs inside the guest at boot (memdiag-vm-run.service): mounts the data disk the host made
# (/dev/vdb: run.sh and what it needs), runs its run.sh with the output kept on that disk, adds
# the journal, and powers the guest off, so the host's qemu exits when the run is over.
set -u
mkdir -p /mnt/vm
if mount /dev/vdb /mnt/vm; then
  mkdir -p /mnt/vm/out
  echo "memdiag-vm: running run.sh on $(uname -r)" > /dev/ttyS0
  ( cd /mnt/vm && timeout "${MEMDIAG_VM_RUN_TIMEOUT:-600}" sh ./run.sh ) > /mnt/vm/out/run.log 2>&1
  rc=$?
  echo "$rc" > /mnt/vm/out/run.rc
  journalctl -b --no-pager -o short-monotonic > /mnt/vm/out/journal.txt 2>&1
  sync
  umount /mnt/vm
  echo "memdiag-vm: run.sh exited $rc" > /dev/ttyS0
else
  echo "memdiag-vm: no data disk" > /dev/ttyS0
fi
systemctl poweroff --force
