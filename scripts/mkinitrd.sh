#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the Linux guest's initramfs: busybox-static and an /init that reports
# what the guest sees (CPUs online, memory) and powers the VM off.
# Usage: mkinitrd.sh BUSYBOX OUTPUT.cpio.gz [ROOT...]
# ROOT (optional, any number): trees copied over the initramfs root, e.g.
# the shared-memory module lib/modules/bulkhead_shmem.ko (loaded by /init)
# and bin/bhshm from `make -C linux` (docs/ipc.md), and the tools of
# scripts/setup.sh's linux step (iperf3, ethtool and their libraries,
# docs/io.md).
set -euo pipefail
busybox=$1
out=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$work"/{bin,sbin,proc,sys,dev,tmp,etc}
cp "$busybox" "$work/bin/busybox"
chmod 755 "$work/bin/busybox"
for applet in sh cat echo grep mount poweroff reboot sleep uname ls dmesg head wc tr sed insmod; do
    ln -s busybox "$work/bin/$applet"
done

for extra in "$@"; do
    if [ -d "$extra" ]; then cp -a "$extra"/. "$work"/; fi
done

cat >"$work/init" <<'EOF'
#!/bin/sh
# Bulkhead Linux guest init: report, then power off (PSCI SYSTEM_OFF).
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
echo "bulkhead-linux: userspace reached"
echo "bulkhead-linux: kernel $(uname -r)"
echo "bulkhead-linux: cpus online $(cat /sys/devices/system/cpu/online)"
echo "bulkhead-linux: cpus $(grep -c ^processor /proc/cpuinfo)"
echo "bulkhead-linux: $(grep MemTotal /proc/meminfo)"
if [ -f /lib/modules/bulkhead_shmem.ko ]; then
    insmod /lib/modules/bulkhead_shmem.ko &&
        echo "bulkhead-linux: shmem devices: $(ls /dev | grep '^bhshm-' | tr '\n' ' ')"
fi
if grep -q 'bulkhead.shell=1' /proc/cmdline; then
    echo "bulkhead-linux: starting a shell (exit to power off)"
    /bin/sh
fi
echo "bulkhead-linux: powering off"
poweroff -f
EOF
chmod 755 "$work/init"

(cd "$work" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --owner=0:0 --quiet) | gzip -9n >"$out.tmp"
mv "$out.tmp" "$out"
