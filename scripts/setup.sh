#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Sets up everything Bulkhead needs on a Debian bookworm machine:
#   - Debian packages: QEMU 10 (bookworm-backports), the AArch64 cross compiler,
#     dtc, cpio, clang-format, clang (host fuzzing, the clang build of the
#     hypervisor: tests/test_style.py);
#   - a Python virtualenv in .venv with the bulkhead package, its test tools and
#     labgrid (the optional extra "farm": bulkhead run/experiment --labgrid, docs/farm.md);
#   - the Linux guest artefacts (Debian arm64 kernel + busybox initramfs) in
#     artefacts/ (never committed), and the workloads: the PREEMPT_RT kernel,
#     cyclictest and stress-ng (docs/workloads.md);
#   - the cache/DRAM model QEMU plugin (tools/cachemodel, docs/model.md): QEMU's
#     qemu-plugin.h from the qemu source package's orig tarball (cached in
#     build/qemu-plugin-api/, never committed), built with the host gcc and glib;
#   - timing mode's QEMU: the same source patched (tools/qemu-timing), only
#     qemu-system-aarch64, built into build/qemu-timing/ (never committed).
# Idempotent: each step is skipped when already done.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

log() { printf '[setup] %s\n' "$*" >&2; }
die() { printf '[setup] error: %s\n' "$*" >&2; exit 1; }

SUDO=
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || die "not root and no sudo: cannot install packages"
    SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive

APT_UPDATED=0
apt_update() {
    if [ "$APT_UPDATED" -eq 0 ]; then
        log "apt-get update"
        $SUDO apt-get update -qq
        APT_UPDATED=1
    fi
}

# --- bookworm-backports, using the URI the machine's sources already name -----
debian_uri() {
    local f uri
    # deb822 sources: first stanza whose Suites include "bookworm"
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        uri=$(awk '
            /^[[:space:]]*$/ { if (u != "" && s) { print u; exit } u=""; s=0; next }
            /^URIs:/ { u=$2 }
            /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == "bookworm") s=1 }
            END { if (u != "" && s) print u }' "$f" | head -n1)
        [ -n "$uri" ] && { echo "$uri"; return; }
    done
    # one-line sources
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        uri=$(awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }' "$f")
        [ -n "$uri" ] && { echo "$uri"; return; }
    done
}

ensure_backports() {
    if grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
        return
    fi
    local uri
    uri=$(debian_uri)
    [ -n "$uri" ] || die "no bookworm entry in the apt sources to copy a URI from"
    log "adding bookworm-backports from $uri"
    printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
        "$uri" | $SUDO tee /etc/apt/sources.list.d/bulkhead-backports.sources >/dev/null
    APT_UPDATED=0
}

qemu_ok() {
    command -v qemu-system-aarch64 >/dev/null || return 1
    local v
    v=$(qemu-system-aarch64 --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
    [ "${v:-0}" -ge 10 ]
}

ensure_packages() {
    local missing=()
    command -v aarch64-linux-gnu-gcc >/dev/null || missing+=(gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu)
    command -v dtc >/dev/null || missing+=(device-tree-compiler)
    command -v cpio >/dev/null || missing+=(cpio)
    command -v make >/dev/null || missing+=(make)
    command -v clang-format >/dev/null || missing+=(clang-format)
    command -v clang >/dev/null || missing+=(clang)  # host fuzzing, the clang build (tests/test_style.py)
    ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a >/dev/null 2>&1 || missing+=(libclang-rt-dev)
    command -v mkimage >/dev/null || missing+=(u-boot-tools)  # the FIT image (docs/boot.md)
    command -v gdb-multiarch >/dev/null || missing+=(gdb-multiarch)  # run --gdb (docs/debugging.md)
    command -v iperf3 >/dev/null || missing+=(iperf3)  # the server outside QEMU (docs/io.md)
    [ -f /usr/lib/u-boot/qemu_arm64/u-boot.bin ] || missing+=(u-boot-qemu)  # run --boot uboot, TF-A's BL33
    command -v dpkg-source >/dev/null || missing+=(dpkg-dev)                 # TF-A's source package
    [ -f /usr/include/openssl/sha.h ] || missing+=(libssl-dev)               # TF-A's fiptool (host)
    python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
    # the cache/DRAM model plugin (tools/cachemodel): host gcc, glib headers, xz for the QEMU source
    command -v gcc >/dev/null || missing+=(gcc libc6-dev)
    command -v make >/dev/null || missing+=(make)
    command -v xz >/dev/null || missing+=(xz-utils)
    { command -v pkg-config >/dev/null && pkg-config --exists glib-2.0; } || missing+=(libglib2.0-dev pkg-config)
    # the patched QEMU of timing mode (tools/qemu-timing): its build dependencies
    command -v ninja >/dev/null || missing+=(ninja-build)
    command -v bzip2 >/dev/null || missing+=(bzip2)
    [ -f /usr/include/libfdt.h ] || missing+=(libfdt-dev)
    pkg-config --exists pixman-1 2>/dev/null || missing+=(libpixman-1-dev)
    pkg-config --exists slirp 2>/dev/null || missing+=(libslirp-dev)
    if ! dpkg --print-foreign-architectures | grep -qx arm64; then
        log "adding dpkg architecture arm64 (for the Linux guest artefacts)"
        $SUDO dpkg --add-architecture arm64
        APT_UPDATED=0
    fi
    ensure_backports
    if [ ${#missing[@]} -gt 0 ]; then
        apt_update
        log "installing ${missing[*]}"
        $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
    if ! qemu_ok; then
        apt_update
        log "installing qemu-system-arm from bookworm-backports"
        $SUDO apt-get install -y -qq --no-install-recommends -t bookworm-backports \
            qemu-system-arm qemu-system-data ipxe-qemu >/dev/null
        qemu_ok || die "qemu-system-aarch64 >= 10 not available after install"
    fi
    # QEMU 10's build wants meson >= 1.5 and pycotap (bookworm has 1.0)
    if ! meson_ok || ! /usr/bin/python3 -c 'import pycotap' 2>/dev/null; then
        apt_update
        log "installing meson and python3-pycotap from bookworm-backports (the timing QEMU's build)"
        $SUDO apt-get install -y -qq --no-install-recommends -t bookworm-backports \
            meson python3-pycotap >/dev/null
        meson_ok || die "meson >= 1.5 not available after install"
    fi
}

meson_ok() {
    command -v meson >/dev/null || return 1
    local v
    v=$(meson --version)
    [ "$(printf '%s\n1.5.0\n' "$v" | sort -V | head -n1)" = 1.5.0 ]
}

# --- Python virtualenv ------------------------------------------------------
ensure_venv() {
    local py=${PYTHON:-python3}
    if [ ! -x .venv/bin/python ]; then
        log "creating .venv"
        "$py" -m venv .venv
    fi
    local stamp=.venv/.bulkhead-installed
    if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ scripts/constraints.txt -nt "$stamp" ]; then
        log "installing the bulkhead package, its test tools and labgrid (the farm extra) into .venv"
        .venv/bin/python -m pip install -q --upgrade pip >/dev/null
        # The versions the suite was last run with (scripts/constraints.txt):
        # an upstream release cannot change CI under us (pytest 9.2 silently
        # broke pytest-xdist's xdist_group, and the farm tests hung).
        .venv/bin/python -m pip install -q -c scripts/constraints.txt -e '.[test,farm]'
        touch "$stamp"
    fi
}

# --- Linux guest artefacts -----------------------------------------------------
# The Debian arm64 kernel whose image, headers and kbuild tools resolve
# together (scripts/kernelset.py: while a security update is being built the
# arm64 headers and the host's linux-kbuild can sit at different Debian
# revisions), recorded in artefacts/linux/kernel-set as KS_* assignments.
# With the Image already fetched, only its ABI is considered.
kernel_set() {
    local dir=artefacts/linux f=artefacts/linux/kernel-set abi=""
    [ -f "$dir/version" ] && abi=$(cat "$dir/version")
    if [ ! -f "$f" ] || { [ -n "$abi" ] && ! grep -qx "KS_ABI=$abi" "$f"; }; then
        apt_update
        mkdir -p "$dir"
        python3 scripts/kernelset.py ${abi:+--abi "$abi"} >"$f.tmp" || { rm -f "$f.tmp"; die "no usable arm64 kernel in apt"; }
        mv "$f.tmp" "$f"
    fi
    # shellcheck disable=SC1090
    . "$f"
    log "kernel: $KS_NOTE"
}

# Kernel headers for the Image's exact version, to build linux/bulkhead_shmem
# (docs/ipc.md). Debian's linux-headers-<v>-arm64 runs the kbuild tools of
# linux-kbuild-<x.y> for arm64; on another host those come from the same
# upstream version of linux-kbuild for the host's architecture (kernel_set).
# All three packages are unpacked under artefacts/linux/headers (nothing is
# installed), with the arch tree's Makefile pointed at the unpacked common tree.
ensure_linux_headers() {
    local dir=artefacts/linux ver
    ver=$(cat "$dir/version")
    local kdir="$dir/headers/usr/src/linux-headers-$ver"
    [ -f "$kdir/Makefile" ] && [ -f "$kdir/.bulkhead-ok" ] && return
    kernel_set
    apt_update
    log "fetching $KS_HEADERS:arm64 $KS_VERSION, $KS_COMMON $KS_COMMON_VERSION, $KS_KBUILD $KS_KBUILD_VERSION (host architecture)"
    rm -rf "$dir/headers" "$dir/deb/h" && mkdir -p "$dir/headers" "$dir/deb/h"
    (cd "$dir/deb/h" && apt-get download -q "$KS_HEADERS:arm64=$KS_VERSION" \
        "$KS_COMMON=$KS_COMMON_VERSION" "$KS_KBUILD=$KS_KBUILD_VERSION" >/dev/null) ||
        die "cannot download the kernel headers set ($KS_NOTE)"
    for deb in "$dir"/deb/h/*.deb; do
        dpkg-deb -x "$deb" "$dir/headers"
    done
    rm -rf "$dir/deb/h"
    printf 'include %s/%s/headers/usr/src/%s/Makefile\n' "$ROOT" "$dir" "$KS_COMMON" >"$kdir/Makefile"
    touch "$kdir/.bulkhead-ok"
}

# The kernel's modules packed into the initramfs (from the Image's own
# package, ensure_linux_tools): the virtio-mmio, virtio-net and virtio-blk
# drivers (the NIC passed straight through to Linux: the benchmark's
# baseline; the stock VirtIO clients of docs/io.md).
LINUX_MODULES=(virtio_mmio virtio_net net_failover failover virtio_blk)

# The modules the initramfs in $1 must hold, one name a line, sorted: the
# kernel's (LINUX_MODULES) and Bulkhead's own (built into $1/shmem/root).
linux_modules_wanted() {
    local ko
    {
        printf '%s\n' "${LINUX_MODULES[@]}"
        for ko in "$1"/shmem/root/lib/modules/*.ko; do
            [ -f "$ko" ] && basename "$ko" .ko
        done
    } | LC_ALL=C sort -u
}

# Whether the initramfs in $1 (artefacts/linux) is current: the Image is
# there, the initramfs is newer than every input and was built with the
# modules wanted now (its stamp initrd.cpio.gz.modules, written by
# scripts/mkinitrd.sh): any change of the module list rebuilds it.
linux_initrd_current() {
    local dir=$1 newest
    newest=$(ls -t scripts/mkinitrd.sh linux/Makefile linux/*.h linux/*/* guests/lib/ioring.c guests/lib/include/ioring.h |
        head -n1)
    [ -f "$dir/Image" ] && [ -f "$dir/initrd.cpio.gz" ] && [ "$dir/initrd.cpio.gz" -nt "$newest" ] &&
        [ "$(cat "$dir/initrd.cpio.gz.modules" 2>/dev/null)" = "$(linux_modules_wanted "$dir")" ]
}

ensure_linux() {
    local dir=artefacts/linux
    linux_initrd_current "$dir" && return
    mkdir -p "$dir/deb"
    if [ ! -f "$dir/Image" ]; then
        rm -f "$dir/version" "$dir/kernel-set"
        kernel_set
        log "fetching $KS_IMAGE:arm64 $KS_VERSION"
        (cd "$dir/deb" && apt-get download -q "$KS_IMAGE:arm64=$KS_VERSION" >/dev/null)
        rm -rf "$dir/deb/x" && mkdir -p "$dir/deb/x"
        dpkg-deb -x "$dir"/deb/linux-image-*.deb "$dir/deb/x"
        local vmlinuz
        vmlinuz=$(ls "$dir"/deb/x/boot/vmlinuz-* | head -n1)
        if gzip -t "$vmlinuz" 2>/dev/null; then
            gzip -dc "$vmlinuz" >"$dir/Image.tmp"
        else
            cp "$vmlinuz" "$dir/Image.tmp"
        fi
        mv "$dir/Image.tmp" "$dir/Image"
        basename "$vmlinuz" | sed 's/^vmlinuz-//' >"$dir/version"
        rm -rf "$dir/deb/x" "$dir"/deb/*.deb
    fi
    if [ ! -f "$dir/busybox" ]; then
        apt_update
        log "fetching busybox-static:arm64"
        (cd "$dir/deb" && apt-get download -q 'busybox-static:arm64' >/dev/null)
        rm -rf "$dir/deb/x" && mkdir -p "$dir/deb/x"
        dpkg-deb -x "$dir"/deb/busybox-static_*.deb "$dir/deb/x"
        cp "$dir/deb/x/bin/busybox" "$dir/busybox"
        rm -rf "$dir/deb/x" "$dir"/deb/*.deb
    fi
    ensure_linux_tools
    ensure_linux_headers
    log "building the shared-memory module and bhshm (make -C linux)"
    rm -rf "$dir/shmem/root"  # only what linux/Makefile builds now: no module an older tree left
    make -s -C linux KDIR="$ROOT/$dir/headers/usr/src/linux-headers-$(cat "$dir/version")" \
        O="$ROOT/$dir/shmem" >/dev/null
    log "building the initramfs"
    bash scripts/mkinitrd.sh "$dir/busybox" "$dir/initrd.cpio.gz" "$dir/shmem/root" "$dir/tools/root"
}

# Programs for the shared-I/O tests and benchmark (docs/io.md) in the
# initramfs: Debian's arm64 iperf3 and ethtool with the shared libraries
# they load (libiperf0, libsctp1, libssl3, libmnl0 and glibc's loader, libc
# and libm), and the kernel's LINUX_MODULES from the Image's own package.
# Unpacked into artefacts/linux/tools/root, never committed; its stamp
# names the modules (a new list fetches them again).
LINUX_TOOL_DEBS=(iperf3 libiperf0 libsctp1 libssl3 libc6 ethtool libmnl0)
ensure_linux_tools() {
    local dir=artefacts/linux ver root
    ver=$(cat "$dir/version")
    root="$dir/tools/root"
    [ "$(cat "$dir/tools/.bulkhead-ok" 2>/dev/null)" = "${LINUX_MODULES[*]}" ] && return
    apt_update
    log "fetching ${LINUX_TOOL_DEBS[*]} (arm64) and linux-image-$ver:arm64's virtio modules"
    rm -rf "$dir/tools" "$dir/deb/t" && mkdir -p "$root/bin" "$root/lib" "$root/lib/modules" "$dir/deb/t/x"
    kernel_set
    (cd "$dir/deb/t" && apt-get download -q "${LINUX_TOOL_DEBS[@]/%/:arm64}" "$KS_IMAGE:arm64=$KS_VERSION" >/dev/null)
    for deb in "$dir"/deb/t/*.deb; do
        dpkg-deb -x "$deb" "$dir/deb/t/x"
    done
    local x="$dir/deb/t/x" lib
    cp "$x/usr/bin/iperf3" "$x/sbin/ethtool" "$root/bin/" 2>/dev/null || cp "$x/usr/bin/iperf3" "$x/usr/sbin/ethtool" "$root/bin/"
    mkdir -p "$root/lib/aarch64-linux-gnu"
    cp -L "$x"/lib/ld-linux-aarch64.so.1 "$root/lib/"
    for lib in libc.so.6 libm.so.6 libiperf.so.0 libsctp.so.1 libssl.so.3 libcrypto.so.3 libmnl.so.0; do
        cp -L "$(find "$x" -name "$lib" | head -n1)" "$root/lib/aarch64-linux-gnu/" ||
            die "no $lib in ${LINUX_TOOL_DEBS[*]}"
    done
    for mod in "${LINUX_MODULES[@]}"; do
        cp "$(find "$x/lib/modules/$ver" -name "$mod.ko" | head -n1)" "$root/lib/modules/" ||
            die "no $mod.ko in linux-image-$ver"
    done
    rm -rf "$dir/deb/t"
    echo "${LINUX_MODULES[*]}" >"$dir/tools/.bulkhead-ok"
}

# --- Linux workloads (docs/workloads.md) ---------------------------------------
# Real benchmarks in the Linux guests, from Debian's arm64 packages: Debian's
# PREEMPT_RT kernel (linux-image-rt-arm64, the Image's release) as
# artefacts/linux/rt/Image, and rt-tests (cyclictest) and stress-ng with
# every shared library they load (the ELF NEEDED closure, resolved in the
# unpacked packages below; nothing is installed) in artefacts/linux/workloads/root,
# and this project's mibench kernels (built here, artefacts/linux/mibench/root),
# packed with busybox, the modules and iperf3 of the linux step (and the
# PCI modules of pcimods.cpio.gz) into
# artefacts/linux/initrd-workloads.cpio.gz (a separate initramfs: the other
# Linux tests keep the small one). Never committed.
WORKLOAD_DEBS=(rt-tests libnuma1 stress-ng libapparmor1 libbsd0 libmd0 libcrypt1 libegl1 libglvnd0 libgbm1
    libdrm2 libwayland-server0 libffi8 libexpat1 libgles2 libjpeg62-turbo libjudydebian1 libkmod2 liblzma5
    libzstd1 libssl3 libsctp1 libxxhash0 zlib1g libc6)
WORKLOAD_BINS="usr/bin/cyclictest usr/bin/stress-ng"

ensure_linux_rt() {
    local dir=artefacts/linux/rt
    [ -f "$dir/Image" ] && [ -f "$dir/version" ] && return
    apt_update
    local pkg
    pkg=$(apt-cache depends 'linux-image-rt-arm64:arm64' 2>/dev/null |
        sed -n 's/.*Depends: \(linux-image-[0-9][^:]*-rt-arm64\).*/\1/p' | head -n1)
    [ -n "$pkg" ] || die "cannot resolve linux-image-rt-arm64:arm64 (is arm64 enabled in apt?)"
    log "fetching $pkg:arm64 (the PREEMPT_RT kernel)"
    rm -rf "$dir" && mkdir -p "$dir/deb/x"
    (cd "$dir/deb" && apt-get download -q "$pkg:arm64" >/dev/null)
    dpkg-deb --fsys-tarfile "$dir"/deb/linux-image-*.deb | tar -x -C "$dir/deb/x" --wildcards './boot/vmlinuz-*'
    local vmlinuz
    vmlinuz=$(ls "$dir"/deb/x/boot/vmlinuz-* | head -n1)
    if gzip -t "$vmlinuz" 2>/dev/null; then gzip -dc "$vmlinuz" >"$dir/Image.tmp"; else cp "$vmlinuz" "$dir/Image.tmp"; fi
    basename "$vmlinuz" | sed 's/^vmlinuz-//' >"$dir/version"
    mv "$dir/Image.tmp" "$dir/Image"
    rm -rf "$dir/deb"
}

# Copies the shared libraries ELF files need, recursively, from the unpacked
# packages under $1 into $2/lib/aarch64-linux-gnu (the loader into $2/lib).
copy_needed() {
    local x=$1 root=$2 f lib path
    shift 2
    local queue=("$@") seen=" "
    mkdir -p "$root/lib/aarch64-linux-gnu"
    while [ ${#queue[@]} -gt 0 ]; do
        f=${queue[0]}
        queue=("${queue[@]:1}")
        for lib in $(aarch64-linux-gnu-readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
            case "$seen" in *" $lib "*) continue ;; esac
            seen="$seen$lib "
            path=$(find "$x" -name "$lib" \( -type f -o -type l \) | head -n1)
            [ -n "$path" ] || die "$f needs $lib, in none of ${WORKLOAD_DEBS[*]}"
            if [ "$lib" = ld-linux-aarch64.so.1 ]; then
                cp -L "$path" "$root/lib/$lib"
            else
                cp -L "$path" "$root/lib/aarch64-linux-gnu/$lib"
            fi
            queue+=("$(readlink -f "$path")")
        done
    done
}

ensure_linux_workloads() {
    local dir=artefacts/linux root=artefacts/linux/workloads/root
    ensure_linux_rt
    if [ ! -f "$dir/workloads/.bulkhead-ok" ]; then
        apt_update
        log "fetching ${WORKLOAD_DEBS[*]} (arm64)"
        rm -rf "$dir/workloads" && mkdir -p "$root/bin" "$dir/workloads/deb/x"
        (cd "$dir/workloads/deb" && apt-get download -q "${WORKLOAD_DEBS[@]/%/:arm64}" >/dev/null)
        local deb b bins=()
        for deb in "$dir"/workloads/deb/*.deb; do
            dpkg-deb -x "$deb" "$dir/workloads/deb/x"
        done
        for b in $WORKLOAD_BINS; do
            cp "$dir/workloads/deb/x/$b" "$root/bin/"
            bins+=("$root/bin/$(basename "$b")")
        done
        copy_needed "$dir/workloads/deb/x" "$root" "${bins[@]}"
        (cd "$dir/workloads/deb" && for deb in *.deb; do dpkg-deb -f "$deb" Package Version | sed 's/^[A-Za-z]*: //' | paste -sd' '; done) \
            >"$dir/workloads/versions"
        rm -rf "$dir/workloads/deb"
        touch "$dir/workloads/.bulkhead-ok"
    fi
    # the mibench kernels as a static user program (guests/mibench/linux), rebuilt when its sources change
    make -s -C guests/mibench/linux O="$PWD/$dir/mibench/root/bin" linux
    local out="$dir/initrd-workloads.cpio.gz"
    if [ ! -f "$out" ] || [ scripts/mkinitrd.sh -nt "$out" ] || [ "$dir/initrd.cpio.gz" -nt "$out" ] ||
        [ "$dir/pcimods.cpio.gz" -nt "$out" ] || [ "$dir/mibench/root/bin/mibench" -nt "$out" ]; then
        log "building the workload initramfs ($out)"
        bash scripts/mkinitrd.sh "$dir/busybox" "$out.tmp" "$dir/shmem/root" "$dir/tools/root" "$root" \
            "$dir/mibench/root"
        # with the PCI modules (a second archive: one initramfs), for a
        # passed-through virtio-net-pci (bulkhead.net=virtio:, docs/workloads.md)
        cat "$dir/pcimods.cpio.gz" >>"$out.tmp"
        mv "$out.tmp.modules" "$out.modules"
        mv "$out.tmp" "$out"
    fi
}

# --- device trees (bulkhead platform import, tests/test_platform_import*.py) ---
# Every arm64 DTB of Debian's newest 6.12 kernel package (bookworm-backports;
# 6.12: the first Debian kernel with the Orange Pi 5 Plus), resolved from apt
# at setup time (the generic flavour: not -rt, -cloud), kept in
# artefacts/dtbs/<vendor>/ (never committed); artefacts/dtbs/version names
# the kernel. The boards with a platform file must be among them.
DTB_SERIES=6.12
DTBS="xilinx/zynqmp-zcu102-rev1.0.dtb xilinx/zynqmp-zcu104-revC.dtb
xilinx/zynqmp-smk-k26-revA-sck-kv-g-revB.dtb broadcom/bcm2711-rpi-4-b.dtb freescale/imx8mp-evk.dtb
rockchip/rk3588-orangepi-5-plus.dtb rockchip/rk3588-rock-5b.dtb"

# The newest linux-image-<DTB_SERIES>.*-arm64 apt knows (e.g. 6.12.117+deb12-arm64).
dtb_kernel() {
    apt-cache pkgnames "linux-image-$DTB_SERIES" 2>/dev/null |
        grep -E "^linux-image-${DTB_SERIES//./\\.}\.[0-9][^ ]*-arm64\$" | grep -vE -- '-(rt|cloud)-arm64$' |
        sed 's/^linux-image-//' | sort -V | tail -n1
}

ensure_dtbs() {
    local dir=artefacts/dtbs f missing=0
    for f in $DTBS; do [ -f "$dir/$f" ] || missing=1; done
    # a complete set (not an older setup's four files) of the kernel named in version
    [ "$missing" -eq 0 ] && [ -s "$dir/version" ] && [ "$(find "$dir" -name '*.dtb' | wc -l)" -gt 100 ] && return
    apt_update
    local kernel
    kernel=$(dtb_kernel)
    [ -n "$kernel" ] || die "no linux-image-$DTB_SERIES.*-arm64 package in apt: enable bookworm-backports and the" \
        "arm64 architecture (dpkg --add-architecture arm64; apt-get update)"
    local dl=build/dtbs-deb
    rm -rf "$dl" && mkdir -p "$dl/x"
    log "fetching linux-image-$kernel:arm64 (the newest $DTB_SERIES, for its device trees)"
    (cd "$dl" && apt-get download -q "linux-image-$kernel:arm64" >/dev/null 2>&1) ||
        die "cannot download linux-image-$kernel:arm64"
    dpkg-deb --fsys-tarfile "$dl"/linux-image-*.deb | tar -x -C "$dl/x" --wildcards "./usr/lib/linux-image-$kernel/*"
    rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
    cp -r "$dl/x/usr/lib/linux-image-$kernel/." "$dir.tmp/"
    for f in $DTBS; do [ -f "$dir.tmp/$f" ] || die "linux-image-$kernel:arm64 has no $f"; done
    echo "$kernel" >"$dir.tmp/version"
    rm -rf "$dir" && mv "$dir.tmp" "$dir"
    rm -rf "$dl"
    log "$(find "$dir" -name '*.dtb' | wc -l) device trees of $kernel in $dir"
}

# --- the cache/DRAM model plugin (docs/model.md) -------------------------------
# QEMU's plugin API header is GPL-2.0-or-later and not shipped by Debian's
# QEMU packages: take it from the qemu source package (bookworm-backports,
# the QEMU we run) at setup time, check it is the installed QEMU's version,
# and keep it in build/ (gitignored).
PLUGIN_API=build/qemu-plugin-api
PLUGIN_SO=build/cachemodel/libcachemodel.so

qemu_upstream_version() {
    qemu-system-aarch64 --version | sed -n 's/^QEMU emulator version \([0-9.]*\).*/\1/p'
}

# The stock nvme and virtio-pci drivers and what they need, from the same
# Debian kernel package as the Image, as an initramfs fragment appended to
# the initrd by the PCI passthrough tests (docs/pci.md):
# lib/modules/pci/<n>-<name>.ko in load order (the Image builds them as
# modules; virtio_net.ko is in the initrd already). pcimods.list records
# the list the fragment was made from: a changed list remakes it.
PCI_MODULES="crypto/crct10dif_common crypto/crct10dif_generic lib/crc-t10dif lib/crc64
crypto/crc64_rocksoft_generic lib/crc64-rocksoft block/t10-pi drivers/nvme/host/nvme-core
drivers/nvme/host/nvme drivers/virtio/virtio_pci_legacy_dev drivers/virtio/virtio_pci_modern_dev
drivers/virtio/virtio_pci"

ensure_linux_pcimods() {
    local dir=artefacts/linux
    [ -f "$dir/pcimods.cpio.gz" ] && [ "$(cat "$dir/pcimods.list" 2>/dev/null)" = "$PCI_MODULES" ] &&
        return
    [ -f "$dir/version" ] || die "$dir/version missing: run '$0 linux' first"
    local ver pkg n=0
    ver=$(cat "$dir/version")
    pkg="linux-image-$ver"
    apt_update
    log "fetching $pkg:arm64 (the nvme and virtio-pci driver modules)"
    rm -rf "$dir/deb/m" && mkdir -p "$dir/deb/m/x" "$dir/deb/m/root/lib/modules/pci"
    kernel_set
    (cd "$dir/deb/m" && apt-get download -q "$pkg:arm64=$KS_VERSION" >/dev/null)
    dpkg-deb -x "$dir"/deb/m/linux-image-*.deb "$dir/deb/m/x"
    for m in $PCI_MODULES; do
        n=$((n + 1))
        cp "$dir/deb/m/x/lib/modules/$ver/kernel/$m.ko" \
            "$dir/deb/m/root/lib/modules/pci/$(printf %02d "$n")-$(basename "$m").ko" ||
            die "module $m.ko not in $pkg"
    done
    (cd "$dir/deb/m/root" && find . -print0 | LC_ALL=C sort -z |
        cpio --null -o -H newc --owner=0:0 --quiet) | gzip -9n >"$dir/pcimods.cpio.gz.tmp"
    mv "$dir/pcimods.cpio.gz.tmp" "$dir/pcimods.cpio.gz"
    printf '%s\n' "$PCI_MODULES" >"$dir/pcimods.list"
    rm -rf "$dir/deb/m"
}

ensure_backports_src() {
    if grep -rqsE '^(Types:.*deb-src|deb-src).*' /etc/apt/sources.list.d/bulkhead-backports-src.sources; then
        return
    fi
    local uri
    uri=$(debian_uri)
    [ -n "$uri" ] || die "no bookworm entry in the apt sources to copy a URI from"
    log "adding bookworm-backports sources (deb-src) from $uri"
    printf 'Types: deb-src\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
        "$uri" | $SUDO tee /etc/apt/sources.list.d/bulkhead-backports-src.sources >/dev/null
    APT_UPDATED=0
}

# The orig (upstream) tarball of the installed QEMU's source package, kept in
# $QEMU_SRC_DL: the plugin header and the timing QEMU come from it.
QEMU_SRC_DL=build/qemu-src

qemu_orig_tarball() {
    local want=$1 dl=$QEMU_SRC_DL orig
    orig=$(ls "$dl"/qemu_"$want"*.orig.tar.* 2>/dev/null | head -n1)
    if [ -n "$orig" ] && [ -f "$dl/$(basename "$orig").ok" ]; then
        echo "$orig"
        return
    fi
    ensure_backports_src
    apt_update
    rm -rf "$dl" && mkdir -p "$dl"
    # The source of the installed QEMU package if the archive still has it,
    # else bookworm-backports' (its version is checked by the callers).
    local src=qemu/bookworm-backports pkgver
    pkgver=$(dpkg-query -W -f='${source:Version}' qemu-system-arm 2>/dev/null || true)
    if [ -n "$pkgver" ] && (cd "$dl" && apt-get source -qq --print-uris "qemu=$pkgver" >/dev/null 2>&1); then
        src="qemu=$pkgver"
    fi
    # The .dsc and Debian tarball may be missing from the archive while the
    # upstream (orig) tarball is served: try the whole source package, then
    # the orig tarball alone; whatever arrived is checked below.
    log "fetching the qemu source package $src"
    (cd "$dl" && apt-get source -qq --download-only "$src" >/dev/null 2>&1) ||
        (cd "$dl" && apt-get source -qq --download-only --tar-only "$src" >/dev/null 2>&1) || true
    orig=$(ls "$dl"/qemu_*.orig.tar.* 2>/dev/null | head -n1)
    [ -n "$orig" ] || die "could not download the qemu orig tarball (apt-get source --download-only $src)"
    local sum
    sum=$(cd "$dl" && apt-get source -qq --print-uris "$src" 2>/dev/null |
        awk -v f="$(basename "$orig")" '$2 == f { sub(/^SHA256:/, "", $4); print $4 }')
    if [ -n "$sum" ]; then
        echo "$sum  $orig" | sha256sum -c --quiet - || die "$orig: SHA-256 mismatch"
    fi
    touch "$orig.ok"
    echo "$orig"
}

ensure_plugin_header() {
    local want
    want=$(qemu_upstream_version)
    [ -n "$want" ] || die "cannot read the installed QEMU's version"
    if [ -f "$PLUGIN_API/qemu-plugin.h" ] && [ "$(cat "$PLUGIN_API/VERSION" 2>/dev/null)" = "$want" ]; then
        return
    fi
    local orig x=$QEMU_SRC_DL/x
    orig=$(qemu_orig_tarball "$want")
    rm -rf "$x" && mkdir -p "$x"
    tar -xf "$orig" -C "$x" --wildcards '*/include/qemu/qemu-plugin.h' '*/VERSION' 2>/dev/null || true
    local hdr ver
    hdr=$(ls "$x"/*/include/qemu/qemu-plugin.h 2>/dev/null | head -n1)
    [ -n "$hdr" ] || die "$orig has no include/qemu/qemu-plugin.h"
    ver=$(cat "$(dirname "$hdr")/../../VERSION")
    [ "$ver" = "$want" ] || die "qemu source $ver does not match the installed QEMU $want (upgrade qemu-system-arm from bookworm-backports)"
    mkdir -p "$PLUGIN_API"
    cp "$hdr" "$PLUGIN_API/qemu-plugin.h"
    echo "$ver" >"$PLUGIN_API/VERSION"
    rm -rf "$x"
    log "qemu-plugin.h of QEMU $ver in $PLUGIN_API"
}

ensure_cachemodel() {
    ensure_plugin_header
    log "building the cache/DRAM model plugin"
    make -s -C tools/cachemodel API="$ROOT/$PLUGIN_API" OUT="$ROOT/build/cachemodel" >/dev/null
    [ -f "$PLUGIN_SO" ] || die "$PLUGIN_SO was not built"
}

# --- the patched QEMU of timing mode (tools/qemu-timing/README.md) ---------------
# The installed QEMU's own source (the orig tarball above) with
# tools/qemu-timing/timing-clock.patch: under MTTCG a time-controlling plugin
# owns QEMU_CLOCK_VIRTUAL. Only qemu-system-aarch64 is built, with the
# installed QEMU's firmware and data files (/usr/share/qemu); nothing is
# installed: run --timing uses build/qemu-timing/qemu-system-aarch64, stock
# QEMU stays everything else's. Rebuilt when the source version, the patch
# or the options change.
QEMU_TIMING=build/qemu-timing
QEMU_TIMING_PATCH=tools/qemu-timing/timing-clock.patch
QEMU_TIMING_OPTS="--target-list=aarch64-softmmu --enable-plugins --disable-docs --disable-user
--disable-tools --disable-werror --disable-install-blobs --disable-debug-info --enable-fdt=system
--enable-slirp --enable-pixman --datadir=/usr/share
--firmwarepath=/usr/share/qemu:/usr/share/seabios:/usr/lib/ipxe/qemu"

qemu_timing_stamp() {
    echo "$(qemu_upstream_version) $(sha256sum "$QEMU_TIMING_PATCH" | cut -d' ' -f1) $QEMU_TIMING_OPTS"
}

ensure_qemu_timing() {
    local bin="$QEMU_TIMING/qemu-system-aarch64" stamp="$QEMU_TIMING/stamp"
    if [ -x "$bin" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$(qemu_timing_stamp)" ]; then
        return
    fi
    local want orig t0=$SECONDS
    want=$(qemu_upstream_version)
    [ -n "$want" ] || die "cannot read the installed QEMU's version"
    orig=$(qemu_orig_tarball "$want")
    rm -rf "$QEMU_TIMING" && mkdir -p "$QEMU_TIMING/src" "$QEMU_TIMING/obj"
    tar -xf "$orig" -C "$QEMU_TIMING/src" --strip-components=1
    [ "$(cat "$QEMU_TIMING/src/VERSION")" = "$want" ] ||
        die "qemu source $(cat "$QEMU_TIMING/src/VERSION") does not match the installed QEMU $want"
    # Debian's tarball leaves out the EDK2 images that QEMU's build unpacks
    # for aarch64 (never used here: -kernel, or TF-A's flash): empty ones.
    local f
    for f in $(sed -n '/fds = \[/,/\]/p' "$QEMU_TIMING/src/pc-bios/meson.build" | grep -o "edk2-[a-z0-9_-]*\.fd"); do
        [ -f "$QEMU_TIMING/src/pc-bios/$f.bz2" ] || bzip2 -c </dev/null >"$QEMU_TIMING/src/pc-bios/$f.bz2"
    done
    patch -s -d "$QEMU_TIMING/src" -p1 --no-backup-if-mismatch <"$QEMU_TIMING_PATCH" ||
        die "$QEMU_TIMING_PATCH does not apply to QEMU $want"
    log "building the timing QEMU $want (patched, qemu-system-aarch64 only; about 25 min on 2 cores)"
    # shellcheck disable=SC2086  # QEMU_TIMING_OPTS is a list of options
    (cd "$QEMU_TIMING/obj" && ../src/configure --python=/usr/bin/python3 $QEMU_TIMING_OPTS) \
        >"$QEMU_TIMING/build.log" 2>&1 ||
        { tail -n 30 "$QEMU_TIMING/build.log" >&2; die "the timing QEMU's configure failed (log: $QEMU_TIMING/build.log)"; }
    ninja -C "$QEMU_TIMING/obj" -j2 qemu-system-aarch64 >>"$QEMU_TIMING/build.log" 2>&1 ||
        { tail -n 30 "$QEMU_TIMING/build.log" >&2; die "the timing QEMU's build failed (log: $QEMU_TIMING/build.log)"; }
    cp "$QEMU_TIMING/obj/qemu-system-aarch64" "$bin"
    "$bin" --version >/dev/null || die "$bin does not run"
    qemu_timing_stamp >"$stamp"
    log "timing QEMU in $bin (built in $((SECONDS - t0)) s)"
}

# --- the firmware chain on QEMU virt (docs/firmware.md) --------------------------
# TF-A for PLAT=qemu with SDEI (BL1, BL2, BL31 and a FIP whose BL33 is
# Debian's U-Boot for qemu_arm64), built from Debian trixie's
# arm-trusted-firmware source package (2.12: bookworm's 2.8 has no SDEI for
# PLAT=qemu), and the QEMU flash image made of bl1.bin and fip.bin
# (TF-A's docs/plat/qemu.rst). Source, objects and images stay in build/tfa/
# (never committed); rebuilt only when the source version, the options or
# U-Boot change.
TFA_DIR=build/tfa
TFA_SUITE=trixie
TFA_OPTS="PLAT=qemu QEMU_USE_GIC_DRIVER=QEMU_GICV3 SDEI_SUPPORT=1 EL3_EXCEPTION_HANDLING=1 DEBUG=0 LOG_LEVEL=20"
TFA_SDEI_DYNAMIC=3  # dynamic SDEI event slots added to PLAT=qemu's map (see tfa_sdei_slots)
UBOOT_QEMU=/usr/lib/u-boot/qemu_arm64/u-boot.bin

ensure_trixie_src() {
    if grep -qs "Suites: $TFA_SUITE" /etc/apt/sources.list.d/bulkhead-$TFA_SUITE-src.sources; then
        return
    fi
    local uri
    uri=$(debian_uri)
    [ -n "$uri" ] || die "no bookworm entry in the apt sources to copy a URI from"
    log "adding $TFA_SUITE sources (deb-src only: source packages, no binaries) from $uri"
    printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
        "$uri" "$TFA_SUITE" | $SUDO tee "/etc/apt/sources.list.d/bulkhead-$TFA_SUITE-src.sources" >/dev/null
    APT_UPDATED=0
}

# TF-A's PLAT=qemu defines only SDEI event 0 (plat/qemu/common/qemu_sdei.c),
# so SDEI_INTERRUPT_BIND fails with SDEI_ENOMEM. Add TFA_SDEI_DYNAMIC dynamic
# private events (1000...) and as many shared ones (2000...), numbered as
# Arm's FVP does (include/plat/arm/common/arm_sdei.h), with TF-A's own macros.
tfa_sdei_slots() {
    local f="$TFA_DIR/src/plat/qemu/common/qemu_sdei.c" i priv="" shared=""
    grep -q SDEI_MAPF_DYNAMIC "$f" && return
    for ((i = 0; i < TFA_SDEI_DYNAMIC; i++)); do
        priv+="\tSDEI_PRIVATE_EVENT($((1000 + i)), SDEI_DYN_IRQ, SDEI_MAPF_DYNAMIC),\n"
        shared+="\tSDEI_SHARED_EVENT($((2000 + i)), SDEI_DYN_IRQ, SDEI_MAPF_DYNAMIC),\n"
    done
    sed -i -e "/SDEI_DEFINE_EVENT_0(PLAT_SDEI_SGI_PRIVATE),/a\\${priv%\\n}" \
        -e "/^static sdei_ev_map_t qemu_sdei_shared\[\] = {/a\\${shared%\\n}" "$f"
    [ "$(grep -c SDEI_MAPF_DYNAMIC "$f")" -eq $((2 * TFA_SDEI_DYNAMIC)) ] ||
        die "$f: could not add the dynamic SDEI events (has the file changed?)"
}

# What the flash image was built from: source version, options, U-Boot.
tfa_stamp() {
    echo "$(cat "$TFA_DIR/src-version" 2>/dev/null) $TFA_OPTS BUILD_STRING SDEI_DYNAMIC=$TFA_SDEI_DYNAMIC" \
        "$(sha256sum "$UBOOT_QEMU" | cut -d' ' -f1)"
}

ensure_tfa() {
    [ -f "$UBOOT_QEMU" ] || die "$UBOOT_QEMU missing: run '$0 packages' (u-boot-qemu)"
    local stamp="$TFA_DIR/flash.stamp"
    if [ -f "$TFA_DIR/flash.bin" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$(tfa_stamp)" ]; then
        return
    fi
    if [ ! -f "$TFA_DIR/src/Makefile" ]; then
        ensure_trixie_src
        apt_update
        local dl="$TFA_DIR/dl" ver
        rm -rf "$dl" "$TFA_DIR/src" && mkdir -p "$dl"
        log "fetching the arm-trusted-firmware source package ($TFA_SUITE)"
        (cd "$dl" && apt-get source -qq --download-only "arm-trusted-firmware/$TFA_SUITE" >/dev/null 2>&1) ||
            die "cannot download arm-trusted-firmware/$TFA_SUITE (apt-get source; deb-src $TFA_SUITE in apt?)"
        # apt checked the files against the Sources index; dpkg-source checks
        # the .dsc's checksums (not its signature: no Debian keyring needed),
        # unpacks and applies Debian's patches
        (cd "$dl" && dpkg-source -x arm-trusted-firmware_*.dsc src >"$ROOT/$TFA_DIR/unpack.log" 2>&1) ||
            die "dpkg-source could not unpack arm-trusted-firmware (log: $TFA_DIR/unpack.log)"
        ver=$(basename "$dl"/arm-trusted-firmware_*.dsc .dsc | sed 's/^arm-trusted-firmware_//')
        mv "$dl/src" "$TFA_DIR/src"
        echo "$ver" >"$TFA_DIR/src-version"
        rm -rf "$dl"
    fi
    tfa_sdei_slots
    log "building TF-A $(cat "$TFA_DIR/src-version") ($TFA_OPTS, BL33 = $UBOOT_QEMU)"
    local t0=$SECONDS
    rm -rf "$TFA_DIR/obj"  # TF-A's make does not track option changes
    # shellcheck disable=SC2086  # TFA_OPTS is a list of make variables
    make -s -C "$TFA_DIR/src" -j2 CROSS_COMPILE=aarch64-linux-gnu- $TFA_OPTS \
        BUILD_BASE="$ROOT/$TFA_DIR/obj" BUILD_STRING="v$(cat "$TFA_DIR/src-version")" BL33="$UBOOT_QEMU" all fip >"$TFA_DIR/build.log" 2>&1 ||
        { tail -n 30 "$TFA_DIR/build.log" >&2; die "TF-A build failed (log: $TFA_DIR/build.log)"; }
    local bin="$TFA_DIR/obj/qemu/release"
    # QEMU's virt flash0 (-bios): BL1 at 0, the FIP at PLAT_QEMU_FIP_BASE (256 KiB)
    rm -f "$TFA_DIR/flash.bin.tmp"
    dd if="$bin/bl1.bin" of="$TFA_DIR/flash.bin.tmp" bs=4096 conv=notrunc status=none
    dd if="$bin/fip.bin" of="$TFA_DIR/flash.bin.tmp" seek=64 bs=4096 conv=notrunc status=none
    mv "$TFA_DIR/flash.bin.tmp" "$TFA_DIR/flash.bin"
    tfa_stamp >"$stamp"
    log "TF-A flash image in $TFA_DIR/flash.bin (built in $((SECONDS - t0)) s)"
}

# sourced (tests/test_setup_initrd.py): the functions only
[ "${BASH_SOURCE[0]}" = "$0" ] || return 0

case "${1:-all}" in
    packages) ensure_packages ;;
    venv) ensure_venv ;;
    linux) ensure_linux; ensure_linux_pcimods ;;
    workloads) ensure_linux; ensure_linux_pcimods; ensure_linux_workloads ;;
    cachemodel) ensure_packages; ensure_cachemodel ;;
    dtbs) ensure_packages; ensure_dtbs ;;
    tfa) ensure_packages; ensure_tfa ;;
    qemu-timing) ensure_packages; ensure_qemu_timing ;;
    all)
        ensure_packages
        ensure_venv
        ensure_linux
        ensure_dtbs
        ensure_linux_pcimods
        ensure_linux_workloads
        ensure_cachemodel
        ensure_tfa
        ensure_qemu_timing
        ;;
    *) die "usage: $0 [all|packages|venv|linux|workloads|dtbs|cachemodel|tfa|qemu-timing]" ;;
esac
log "ready"
