#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the Linux guest's initramfs: busybox-static and an /init that reports
# what the guest sees (CPUs online, memory), runs the workload the kernel
# command line names (bulkhead.net=, bulkhead.run=; docs/workloads.md) and
# powers the VM off.
# Usage: mkinitrd.sh BUSYBOX OUTPUT.cpio.gz [ROOT...]
# ROOT (optional, any number): trees copied over the initramfs root, e.g.
# the shared-memory module lib/modules/bulkhead_shmem.ko (loaded by /init)
# and bin/bhshm from `make -C linux` (docs/ipc.md), and the tools of
# scripts/setup.sh's linux step (iperf3, ethtool and their libraries,
# docs/io.md), and the workloads' tree (cyclictest, stress-ng and their
# libraries, docs/workloads.md).
set -euo pipefail
busybox=$1
out=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$work"/{bin,sbin,proc,sys,dev,tmp,etc}
cp "$busybox" "$work/bin/busybox"
chmod 755 "$work/bin/busybox"
for applet in sh cat echo grep mount poweroff reboot sleep uname ls dmesg head wc tr sed insmod cut mkdir ping; do
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
# A workload named on the kernel command line (docs/workloads.md):
# bulkhead.net=io:<ip>/<len> brings eth0 up on the shared I/O device
# (bulkhead_net), bulkhead.net=virtio:<ip>/<len> on a passed-through
# virtio-net NIC; bulkhead.run="<command>" runs the command with sh (its output
# between the begin and end markers, which give the uptime and exit status;
# kernel messages held back meanwhile).
net=$(sed -n 's/.*bulkhead\.net=\([^ ]*\).*/\1/p' /proc/cmdline)
if [ -n "$net" ]; then
    case "$net" in
        io:*) insmod /lib/modules/bulkhead_net.ko ;;
        virtio:*)
            # a virtio-net-pci function (pci: [{qemu: virtio-net-pci}], docs/pci.md)
            # needs Debian's virtio_pci modules, in the initramfs when pcimods.cpio.gz
            # was appended to it (scripts/setup.sh workloads)
            for m in /lib/modules/pci/*-virtio_pci*.ko; do [ -f "$m" ] && insmod "$m"; done
            for m in failover net_failover virtio_net virtio_mmio; do insmod /lib/modules/$m.ko; done ;;
        *) echo "bulkhead-linux: bad bulkhead.net=$net (io:<ip>/<len> or virtio:<ip>/<len>)" ;;
    esac
    busybox ip addr add "${net#*:}" dev eth0 && busybox ip link set eth0 up
    n=0
    while [ "$(cat /sys/class/net/eth0/operstate 2>/dev/null)" != up ] && [ $n -lt 100 ]; do
        busybox usleep 100000
        n=$((n + 1))
    done
    echo "bulkhead-linux: eth0 $(cat /sys/class/net/eth0/operstate 2>/dev/null) ${net#*:}"
fi
run=$(sed -n 's/.*bulkhead\.run="\([^"]*\)".*/\1/p' /proc/cmdline)
if [ -n "$run" ]; then
    mkdir -p /dev/shm && mount -t tmpfs tmpfs /dev/shm  # cyclictest's shm_open
    echo 1 >/proc/sys/kernel/printk
    echo "bulkhead-run: begin at $(cut -d' ' -f1 /proc/uptime) s: $run"
    (cd /tmp && PATH=/bin:/sbin sh -c "$run")
    status=$?
    echo "bulkhead-run: end at $(cut -d' ' -f1 /proc/uptime) s: status=$status"
fi
# eth0 down: bulkhead_net tells the I/O VM this client is done
[ -n "$net" ] && busybox ip link set eth0 down
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
