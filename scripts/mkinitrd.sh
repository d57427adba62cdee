#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the Linux guest's initramfs: busybox-static and an /init that reports
# what the guest sees (CPUs online, memory), runs the workload the kernel
# command line names (bulkhead.net=, bulkhead.run=; docs/workloads.md) and
# powers the VM off.
# Usage: mkinitrd.sh BUSYBOX OUTPUT.cpio.gz [ROOT...]
#        mkinitrd.sh --init FILE   (writes only the /init script to FILE)
# ROOT (optional, any number): trees copied over the initramfs root, e.g.
# the shared-memory module lib/modules/bulkhead_shmem.ko (loaded by /init)
# and bin/bhshm from `make -C linux` (docs/ipc.md), and the tools of
# scripts/setup.sh's linux step (iperf3, ethtool and their libraries,
# docs/io.md), and the workloads' tree (cyclictest, stress-ng and their
# libraries, docs/workloads.md).
set -euo pipefail

write_init() {
cat >"$1" <<'EOF'
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
# bulkhead.net=virtio:<ip>/<len> brings eth0 up on a virtio-net device with
# Debian's own drivers: a NIC passed through, or the shared I/O device's
# (an io: client with virtio: net, docs/io.md); bulkhead.run="<command>" runs the command with sh (its output
# between the begin and end markers, which give the uptime and exit status;
# kernel messages held back meanwhile).
net=$(sed -n 's/.*bulkhead\.net=\([^ ]*\).*/\1/p' /proc/cmdline)
if [ -n "$net" ]; then
    case "$net" in
        virtio:*)
            # a virtio-net-pci function (pci: [{qemu: virtio-net-pci}], docs/pci.md)
            # needs Debian's virtio_pci modules, in the initramfs when pcimods.cpio.gz
            # was appended to it (scripts/setup.sh workloads); virtio_mmio serves the
            # rest (a passed-through virtio-mmio slot, the shared I/O device's)
            for m in /lib/modules/pci/*-virtio_pci*.ko; do [ -f "$m" ] && insmod "$m"; done
            for m in failover net_failover virtio_net virtio_mmio; do insmod /lib/modules/$m.ko; done ;;
        io:*) echo "bulkhead-linux: bulkhead.net=io: is gone with the bulkhead_net module: use virtio:<ip>/<len> (docs/io.md)" ;;
        *) echo "bulkhead-linux: bad bulkhead.net=$net (virtio:<ip>/<len>)" ;;
    esac
    busybox ip addr add "${net#*:}" dev eth0 && busybox ip link set eth0 up
    n=0
    while [ "$(cat /sys/class/net/eth0/operstate 2>/dev/null)" != up ] && [ $n -lt 100 ]; do
        busybox usleep 100000
        n=$((n + 1))
    done
    echo "bulkhead-linux: eth0 $(cat /sys/class/net/eth0/operstate 2>/dev/null) ${net#*:}"
fi
# bulkhead.sync= (the start barrier, docs/experiments.md): a page shared with
# the other VMs of the run, struct bench_sync of guests/lib/include/bench.h
# (u32 token, u32 done, u32 ack[8] by VM id), read and written with busybox
# devmem through /dev/mem (no module needed, so also on the PREEMPT_RT kernel).
#   lead:<ipa>:<peer ids>:<timeout s>  publish a token, run the command once every
#       peer acknowledged it (FAIL after the timeout), then write done = token;
#   peer:<ipa>:<own id>  start the command at once, acknowledge the lead's token
#       once a program of the command other than sh or sleep runs (so that a
#       leading "sleep 2;" delays the acknowledgement), stop it once done =
#       token (SIGINT to every process, SIGTERM after 2 s, SIGKILL after 10 s).
uptime() { cut -d' ' -f1 /proc/uptime; }
rd() { echo $(($(busybox devmem $(($1)) 32))); }
wr() { busybox devmem $(($1)) 32 $(($2)); }
workload_running() {  # a user process other than this script, sh, sleep or busybox
    for d in /proc/[0-9]*; do
        read -r p comm state ppid rest <"$d/stat" 2>/dev/null || continue
        [ "$p" -le 2 ] || [ "$ppid" = 2 ] && continue  # init, kernel threads
        case "$comm" in "(init)" | "(sh)" | "(sleep)" | "(busybox)") continue ;; esac
        return 0
    done
    return 1
}
run_command() {
    echo "bulkhead-run: begin at $(uptime) s: $run"
    (cd /tmp && PATH=/bin:/sbin sh -c "$run")
    status=$?
    echo "bulkhead-run: end at $(uptime) s: status=$status"
}
sync_lead() {
    base=$2 limit=$4 n=0 ready=0
    ids=$(echo "$3" | tr ',' ' ')
    for id in $ids; do n=$((n + 1)); done
    token=$(((($(rd $base) + 2) & 0xffffffff) | 1))
    wr $((base + 4)) 0
    wr $base $token
    echo "bulkhead-sync: lead at $base, waiting for $n peer(s) (VM ids $ids)"
    start=$(cut -d. -f1 /proc/uptime)
    while :; do
        ready=0
        for id in $ids; do [ "$(rd $((base + 8 + 4 * id)))" = $token ] && ready=$((ready + 1)); done
        [ $ready -ge $n ] && break
        [ $(($(cut -d. -f1 /proc/uptime) - start)) -ge "$limit" ] && break
        busybox usleep 20000
    done
    if [ $ready -lt $n ]; then
        echo "bulkhead-sync: FAIL: $ready of $n peers ready after $limit s"
    else
        echo "bulkhead-sync: $ready of $n peers ready at $(uptime) s"
        run_command
    fi
    wr $((base + 4)) $token
    echo "bulkhead-sync: done at $(uptime) s"
}
sync_peer() {
    base=$2 ack=$(($2 + 8 + 4 * $3)) acked=0 stale=0
    t=$(rd $base)
    [ "$t" != 0 ] && [ "$(rd $((base + 4)))" = "$t" ] && stale=$t  # a finished session of an earlier boot
    echo "bulkhead-sync: peer at $base, VM id $3"
    echo "bulkhead-run: begin at $(uptime) s: $run"
    (cd /tmp && PATH=/bin:/sbin exec sh -c "$run") &
    pid=$!
    while kill -0 $pid 2>/dev/null; do
        t=$(rd $base)
        if [ "$t" != 0 ] && [ "$t" != $stale ]; then
            if [ "$acked" != "$t" ] && workload_running; then
                wr $ack $t
                acked=$t
                echo "bulkhead-sync: running, acknowledged at $(uptime) s"
            fi
            if [ "$(rd $((base + 4)))" = "$t" ]; then
                echo "bulkhead-sync: lead done at $(uptime) s: stopping the command"
                n=0
                for sig in INT INT TERM TERM TERM TERM TERM TERM TERM TERM KILL; do
                    kill -0 $pid 2>/dev/null || break
                    kill -$sig -1
                    while kill -0 $pid 2>/dev/null && [ $n -lt 10 ]; do busybox usleep 100000; n=$((n + 1)); done
                    n=0
                done
                break
            fi
        fi
        busybox usleep 20000
    done
    wait $pid
    status=$?
    echo "bulkhead-run: end at $(uptime) s: status=$status"
}
run=$(sed -n 's/.*bulkhead\.run="\([^"]*\)".*/\1/p' /proc/cmdline)
sync=$(sed -n 's/.*bulkhead\.sync=\([^ ]*\).*/\1/p' /proc/cmdline)
if [ -n "$run" ]; then
    mkdir -p /dev/shm && mount -t tmpfs tmpfs /dev/shm  # cyclictest's shm_open
    echo 1 >/proc/sys/kernel/printk
    case "$sync" in
        "") run_command ;;
        lead:0x*:*:*) sync_lead $(echo "$sync" | tr ':' ' ') ;;
        peer:0x*:*) sync_peer $(echo "$sync" | tr ':' ' ') ;;
        *) echo "bulkhead-sync: FAIL: bad bulkhead.sync=$sync (lead:<ipa>:<ids>:<s> or peer:<ipa>:<id>)" ;;
    esac
fi
if grep -q 'bulkhead.shell=1' /proc/cmdline; then
    echo "bulkhead-linux: starting a shell (exit to power off)"
    /bin/sh
fi
echo "bulkhead-linux: powering off"
poweroff -f
EOF
chmod 755 "$1"
}

if [ "${1:-}" = --init ]; then
    write_init "$2"
    exit 0
fi
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

write_init "$work/init"

(cd "$work" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --owner=0:0 --quiet) | gzip -9n >"$out.tmp"
# the stamp: the modules packed, one name a line, sorted (scripts/setup.sh
# rebuilds the initramfs when the list it wants differs)
find "$work/lib/modules" -maxdepth 1 -name '*.ko' -printf '%f\n' 2>/dev/null | sed 's/\.ko$//' | LC_ALL=C sort >"$out.modules"
mv "$out.tmp" "$out"
