# SPDX-License-Identifier: Apache-2.0
"""Shared disk: the ``disk:`` section (docs/io.md "Shared disk").

One block device of the platform (a virtio-blk device on a virtio-mmio
transport of QEMU ``virt``, or an SD card behind an SD host controller:
the ZynqMP's sd0/sd1) is passed through to an I/O VM; every client VM
gets a region of the disk (a disjoint sector range the toolchain lays out)
and one shared-memory region with a block request ring and a response ring
(``guests/lib/include/blkring.h``) and a doorbell each way. As ``io:`` does,
this module expands the section into ordinary ``shmem`` regions and
parameter-block entries, checks it, and computes what ``check`` reports:
each client's guaranteed IOPS and bandwidth under work-conserving weighted
round-robin by request (``guests/iovm/iosched.c``, the frame scheduler's
logic) on a disk whose measured capacity is ``iops`` 4 KiB requests/s and
``mbps`` MB/s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

from bulkhead.base.csource import CSource, Field
from bulkhead.base.errors import Diagnostic
from bulkhead.config import shared_io
from bulkhead.config.mechanism import Keys, Mechanism, Need, SystemView, VmView
from bulkhead.config.model import (
    PAGE,
    DiskClientSpec,
    DiskSpec,
    IoSpec,
    Platform,
    PlatformDevice,
    Range,
    Resolved,
    ShmemMapSpec,
    ShmemSpec,
    SystemSpec,
    VmSpec,
)
from bulkhead.config.reader import Reader, join
from bulkhead.config.yamlpos import YNode

KEYS = ("device", "vm", "size", "iops", "mbps", "ipa", "client_ipa", "doorbell_irq", "client_doorbell_irq",
        "virtio_ipa", "clients")
CLIENT_KEYS = ("vm", "size", "offset", "weight", "queue", "virtio")
VIRTIO_BLK = 2  # the virtio device ID the hypervisor bridges to a disk client's rings

# mirrors guests/lib/include/blkring.h
SECTOR = 512
BLOCK = 4096  # bytes of a request at most (one slot's data)
SLOT_SIZE = 64 + 4096
CTRL_SIZE = 4096
MAX_SLOTS = 64
MAX_CLIENTS = 8  # IOSCHED_MAX_CLIENTS in guests/iovm
ALIGN = 4096  # region starts and sizes: whole 4 KiB blocks
MAX_IOPS = 10_000_000
MAX_MBPS = 100_000

SDHCI_COMPATIBLE = "arasan,sdhci-8.9a"  # the I/O VM's SD host controller driver (guests/iovm/sdhci.c)

DEFAULT_IPA = 0x7800_0000  # after io:'s regions (0x7000_0000)
DEFAULT_DOORBELL = 130  # I/O VM: 130 + i (io: takes 120 + i)
DEFAULT_CLIENT_DOORBELL = 121  # io: takes 120


def region_size(queue: int) -> int:
    """Bytes of a client's shared region: control page + two rings
    (blkring_region_size), rounded up to whole pages."""
    return (CTRL_SIZE + 2 * queue * SLOT_SIZE + PAGE - 1) // PAGE * PAGE


def parse(r: Reader, node: YNode, path: str = "disk") -> DiskSpec:
    m = r.mapping(node, path, KEYS, ("device", "vm", "size", "iops", "mbps", "clients"),
                  "a mapping {device, vm, size, iops, mbps, clients, ...}")

    def p(key: str) -> str:
        return join(path, key)

    def client(n: YNode, q: str) -> DiskClientSpec:
        cm = r.mapping(n, q, CLIENT_KEYS, ("vm", "size"), "a client {vm, size, offset, weight, queue, virtio}")
        return DiskClientSpec(
            vm=r.string(cm["vm"], join(q, "vm"), "a VM name"),
            size=r.size(cm["size"], join(q, "size")),
            offset=r.integer(cm["offset"], join(q, "offset"), "a byte offset into the disk (integer >= 0)", 0)
            if "offset" in cm else None,
            weight=r.integer(cm["weight"], join(q, "weight"), "a weight (integer 1-100)", 1, 100)
            if "weight" in cm else 1,
            queue=r.integer(cm["queue"], join(q, "queue"), f"a queue size (integer 1-{MAX_SLOTS})", 1, MAX_SLOTS)
            if "queue" in cm else 8,
            path=q,
            virtio=_virtio(r, cm["virtio"], join(q, "virtio")) if "virtio" in cm else None,
        )

    clients = shared_io.clients_of(r, m, path, client, MAX_CLIENTS)
    return DiskSpec(
        device=r.string(m["device"], p("device"), "a device name"),
        vm=r.string(m["vm"], p("vm"), "a VM name"),
        size=r.size(m["size"], p("size")),
        iops=r.integer(m["iops"], p("iops"), f"4 KiB requests/s (integer 1-{MAX_IOPS})", 1, MAX_IOPS),
        mbps=r.integer(m["mbps"], p("mbps"), f"MB/s (integer 1-{MAX_MBPS})", 1, MAX_MBPS),
        clients=clients,
        path=path,
        **shared_io.ring_keys(r, m, path, DEFAULT_IPA, DEFAULT_DOORBELL, DEFAULT_CLIENT_DOORBELL,
                              DiskSpec.virtio_ipa),
    )


def _virtio(r: Reader, node: YNode, path: str) -> str:
    kind = r.string(node, path, "a virtio device kind ('blk')")
    if kind != "blk":
        raise r.fail(node, path, f"unknown virtio device '{kind}' for a disk client; the hypervisor bridges: blk")
    return kind


def layout(disk: DiskSpec) -> list[tuple[int, int]]:
    """Each client's region as (first byte, size): its ``offset`` if given,
    else the next 4 KiB boundary after every region before it in the list."""
    out = []
    end = 0
    for c in disk.clients:
        start = c.offset if c.offset is not None else (end + ALIGN - 1) // ALIGN * ALIGN
        out.append((start, c.size))
        end = max(end, start + c.size)
    return out


def _shmem_index(shmem: tuple[ShmemSpec, ...], vm: str) -> int:
    return sum(1 for sh in shmem for mp in sh.maps if mp.vm == vm)


def expand(disk: DiskSpec, platform: Platform, vms: tuple[VmSpec, ...], shmem: tuple[ShmemSpec, ...]
           ) -> tuple[tuple[VmSpec, ...], tuple[ShmemSpec, ...]]:
    """One shared region ``disk<i>`` per client (appended to ``shmem``) and
    the parameter-block entries of the I/O VM (``disk_*``: the device, each
    client's region in sectors, ring and weight) and of bare-metal clients
    (``blk_shm``, ``blk_queue``, ``blk_sectors``)."""
    regions = list(shmem)
    iovm_params: list[tuple[str, str]] = []
    client_params: dict[str, list[tuple[str, str]]] = {}
    ipa = disk.ipa
    for i, (c, (start, size)) in enumerate(zip(disk.clients, layout(disk), strict=True)):
        shm_size = region_size(c.queue)
        io_index = _shmem_index(tuple(regions), disk.vm)
        cl_index = _shmem_index(tuple(regions), c.vm)
        regions.append(ShmemSpec(
            index=len(regions), name=f"disk{i}", size=shm_size, pa=None,
            maps=(ShmemMapSpec(disk.vm, ipa, disk.doorbell_irq + i, disk.path),
                  # a virtio client's doorbell goes to the hypervisor's bridge, its SPI is the device's
                  ShmemMapSpec(c.vm, disk.client_ipa, None if c.virtio else disk.client_doorbell_irq, c.path)),
            path=c.path,
        ))
        ipa += shm_size
        iovm_params += [
            (f"disk{i}_vm", c.vm), (f"disk{i}_shm", str(io_index)), (f"disk{i}_queue", str(c.queue)),
            (f"disk{i}_weight", str(c.weight)), (f"disk{i}_start", str(start // SECTOR)),
            (f"disk{i}_sectors", str(size // SECTOR)),
        ]
        client_params.setdefault(c.vm, []).extend(
            [("virtio_blk_base", f"0x{disk.virtio_ipa:x}"), ("virtio_blk_irq", str(disk.client_doorbell_irq))]
            if c.virtio else
            [("blk_shm", str(cl_index)), ("blk_queue", str(c.queue)), ("blk_sectors", str(size // SECTOR))])
    dev = platform.device(disk.device)
    client_params[disk.vm] = [("disk_clients", str(len(disk.clients))), ("disk_device", disk.device),
                              ("disk_driver", (driver_of(dev) if dev else None) or "virtio"),
                              ("disk_base", f"0x{dev.base:x}" if dev else "0"),
                              ("disk_sectors", str(disk.size // SECTOR)), ("disk_iops", str(disk.iops)),
                              *iovm_params]
    out_vms = [replace(vm, params=(*vm.params, *client_params[vm.name]))
               if vm.name in client_params and vm.type == "baremetal" else vm for vm in vms]
    return tuple(out_vms), tuple(regions)


def driver_of(dev: PlatformDevice) -> str | None:
    """The I/O VM's disk driver for a platform device (guests/iovm/blkdev.h):
    "virtio" for a virtio-mmio transport, "sdhci" for an Arasan SDHCI 8.9a
    (standard SD Host Controller v3 registers), else None."""
    if "virtio,mmio" in dev.compatible:
        return "virtio"
    if SDHCI_COMPATIBLE in dev.compatible:
        return "sdhci"
    return None


def check(s: SystemSpec) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """(errors, warnings) about ``disk:`` (the generated regions are checked as shmem)."""
    disk = s.disk
    if disk is None:
        return [], []
    errs: list[Diagnostic] = []

    def err(path: str, msg: str) -> None:
        errs.append(s.locs.diag(path, msg))

    dev = s.platform.device(disk.device)
    if dev is None or driver_of(dev) is None:
        known = ", ".join(d.name for d in s.platform.devices if driver_of(d)) or "none"
        err(join(disk.path, "device"), f"'{disk.device}' is not a disk device of '{s.platform.name}' (the I/O VM "
                                        f"drives a virtio-blk device on a virtio-mmio transport or an SD card on "
                                        f"an SD host controller, compatible '{SDHCI_COMPATIBLE}'): {known}")
    if disk.size % ALIGN:
        err(join(disk.path, "size"), f"the disk's size {disk.size} is not a multiple of {ALIGN} bytes")
    iovm = s.vm(disk.vm)
    if iovm is None:
        err(join(disk.path, "vm"), f"unknown VM '{disk.vm}'")
    else:
        if iovm.type != "baremetal":
            err(join(disk.path, "vm"), f"the I/O VM '{disk.vm}' must be a bare-metal VM (type: baremetal)")
        if disk.device not in iovm.devices:
            err(join(disk.path, "device"), f"device '{disk.device}' must be passed through to the I/O VM: "
                                            f"add it to {iovm.path}.devices")
        if not iovm.introspection and dev is not None and driver_of(dev) == "virtio":
            err(join(disk.path, "vm"), f"the I/O VM '{disk.vm}' gives the disk the host physical addresses of "
                                        f"its buffers (BH_HC_IPA_INFO): add 'introspection: true' to {iovm.path}")
    seen: dict[str, str] = {}
    placed: list[tuple[int, int, str]] = []
    for c, (start, size) in zip(disk.clients, layout(disk), strict=True):
        vm = s.vm(c.vm)
        if vm is None:
            err(join(c.path, "vm"), f"unknown VM '{c.vm}'")
        elif c.vm == disk.vm:
            err(join(c.path, "vm"), f"VM '{c.vm}' is the disk's I/O VM; it cannot also be a client")
        elif c.virtio:
            for msg in shared_io.virtio_vm_errors(s, vm, disk.client_doorbell_irq, "disk.client_doorbell_irq"):
                err(join(c.path, "virtio"), msg)
        elif vm.type != "baremetal":
            err(join(c.path, "vm"), f"client VM '{c.vm}' is of type {vm.type}; it speaks the block ring as a "
                                     "bare-metal VM, or add 'virtio: blk' (the hypervisor's bridge; docs/io.md)")
        if c.vm in seen:
            err(join(c.path, "vm"), f"VM '{c.vm}' is a disk client twice (also {seen[c.vm]})")
        seen.setdefault(c.vm, c.path)
        if size % ALIGN or start % ALIGN:
            what, path = ("size", "size") if size % ALIGN else ("offset", "offset")
            err(join(c.path, path), f"the region's {what} is not a multiple of {ALIGN} bytes")
        if start + size > disk.size:
            err(join(c.path, "size"), f"region [{start:#x}, {start + size:#x}) of '{c.vm}' ends beyond the "
                                       f"disk's {disk.size:#x} bytes")
        for o_start, o_end, o_path in placed:
            if start < o_end and o_start < start + size:
                err(join(c.path, "offset" if c.offset is not None else "size"),
                    f"region [{start:#x}, {start + size:#x}) of '{c.vm}' overlaps {o_path}'s "
                    f"[{o_start:#x}, {o_end:#x})")
        placed.append((start, start + size, c.path))
    return errs, []


# --- virtio-blk clients (core/virtio, docs/io.md "VirtIO") ---------------------


def virtio_client(disk: DiskSpec | None, vm: str) -> tuple[int, DiskClientSpec] | None:
    """VM ``vm``'s (index, client entry) if it has a virtio-blk device."""
    if disk is None:
        return None
    return next(((i, c) for i, c in enumerate(disk.clients) if c.vm == vm and c.virtio), None)


def virtio_region(disk: DiskSpec | None, vm: str) -> str | None:
    """The name of the region a virtio-blk client's device is bridged to."""
    found = virtio_client(disk, vm)
    return f"disk{found[0]}" if found else None


def ipa_items(s: SystemSpec, vm: VmSpec) -> list[tuple[str, Range, str]]:
    """A virtio-blk client's transport page."""
    found = virtio_client(s.disk, vm.name)
    if found is None or s.disk is None:
        return []
    return [("the virtio-blk transport", Range(s.disk.virtio_ipa, shared_io.VIRTIO_SIZE),
             join(found[1].path, "virtio"))]


def emit_vm(out: CSource, system: SystemView, vm: VmView) -> list[Field]:
    """A virtio-blk client's device (struct cfg_virtio): its page, SPI,
    region and capacity."""
    disk = system.spec.disk
    found = virtio_client(disk, vm.name)
    if disk is None or found is None:
        return []
    i, c = found
    return shared_io.virtio_row(out, system, vm, ("virtio_blk", VIRTIO_BLK), (disk.virtio_ipa, disk.client_doorbell_irq),
                                f"disk{i}", c.queue, ("sectors", str(layout(disk)[i][1] // SECTOR)))


def needs(system: SystemView) -> list[Need]:
    """The virtio bridge for a client with a virtio-blk device."""
    return shared_io.virtio_needs(system.spec.disk.clients if system.spec.disk else ())


# --- guarantees ---------------------------------------------------------------


@dataclass(frozen=True)
class Guarantee:
    """A client's guaranteed share of the disk while it stays backlogged."""

    vm: str
    weight: int
    share: Fraction  # weight / total weight
    iops: Fraction  # 4 KiB requests/s
    mbps: Fraction  # MB/s of sequential 4 KiB requests
    delta: Fraction  # seconds: longest wait for service while backlogged


def guarantees(disk: DiskSpec, io: IoSpec | None = None) -> list[Guarantee]:
    """Work-conserving weighted round-robin by request (at most 4 KiB each,
    one slot) on a disk that serves ``iops`` 4 KiB requests/s and ``mbps``
    MB/s while anyone is backlogged: the frame scheduler's argument
    (shared_io.wrr) with requests for frames. A backlogged client i
    gets at least w_i of every W requests served, so w_i / W of either
    capacity, and waits at most (W - w_i + 1) / iops for its next request.
    Lower bounds: an idle client's turns go to the others. When the same
    I/O VM serves ``io`` too, each request's time grows by one frame's
    (shared_io.cpu_shared)."""
    _, per_req = shared_io.cpu_shared(io, disk)
    seq = Fraction(BLOCK, disk.mbps * 10**6)  # seconds per sequential 4 KiB request
    return [Guarantee(c.vm, c.weight, t.share, t.rate, t.share * BLOCK / (seq + per_req) / 10**6, t.delta)
            for c, t in zip(disk.clients, shared_io.wrr([c.weight for c in disk.clients], 1 / Fraction(disk.iops)
                                                        + per_req), strict=True)]


def report(system: Resolved) -> str:
    disk, io = system.spec.disk, system.spec.io
    if disk is None:
        return ""
    lines = ["", f"shared disk: device {disk.device} -> I/O VM {disk.vm}, {disk.size >> 20} MiB, capacity "
                 f"{disk.iops} IOPS (4 KiB) and {disk.mbps} MB/s (work-conserving weighted round-robin by request)"]
    _, per_req = shared_io.cpu_shared(io, disk)
    if per_req:
        lines.append(f"  the I/O VM serves the network too: a request's time {1e6 / disk.iops:.1f} us + one "
                     f"frame's {float(per_req) * 1e6:.1f} us (effective capacity "
                     f"{float(1 / (1 / Fraction(disk.iops) + per_req)):.1f} IOPS)")
    for (start, size), g in zip(layout(disk), guarantees(disk, io), strict=True):
        lines.append(f"  {g.vm}: sectors [{start // SECTOR}, {(start + size) // SECTOR}) ({size >> 10} KiB), "
                     f"weight {g.weight} ({float(g.share) * 100:.1f}%): >= {float(g.iops):.1f} IOPS, "
                     f">= {float(g.mbps):.2f} MB/s, delta <= {float(g.delta) * 1e6:.1f} us")
    for c in disk.clients:
        if c.virtio:
            lines.append(f"  {c.vm}: virtio-blk at 0x{disk.virtio_ipa:x}, SPI {disk.client_doorbell_irq} "
                         "(the hypervisor bridges it to the block rings)")
    return "\n".join(lines) + "\n"


def document(disk: DiskSpec, io: IoSpec | None = None) -> dict[str, Any]:
    return {
        "device": disk.device, "vm": disk.vm, "size": disk.size, "iops": disk.iops, "mbps": disk.mbps,
        "frame_us_per_request": float(shared_io.cpu_shared(io, disk)[1]) * 1e6,
        "clients": [
            {"vm": c.vm, "start_sector": start // SECTOR, "sectors": size // SECTOR, "weight": c.weight,
             "queue": c.queue, "virtio": c.virtio, "iops": float(g.iops), "mbps": float(g.mbps), "delta_us": float(g.delta) * 1e6}
            for c, (start, size), g in zip(disk.clients, layout(disk), guarantees(disk, io), strict=True)
        ],
    }


# --- bulkhead run --stats ------------------------------------------------------------

STATS_RE = re.compile(r"\[[^\]\s]+\] iovm: disk client=(?P<client>\S+) (?P<rest>.*?)\s*$")
STATS_FIELDS = ("reqs", "read_bytes", "written_bytes", "refused", "errors", "malformed", "iops")
STATS_HEAD = ("CLIENT", "REQS", "READ_BYTES", "WRITTEN_BYTES", "REFUSED", "ERRORS", "MALFORMED", "IOPS")


def parse_stats(line: str) -> tuple[str, dict[str, int]] | None:
    """(client, counters) of one of the I/O VM's ``[<vm>] iovm: disk client=...``
    counter lines (guests/iovm/blkserve.c: every ``stats_ms`` and at the end), or None."""
    return shared_io.parse_stats(line, STATS_RE, STATS_FIELDS)


def stats_cells(rows: dict[str, dict[str, int]]) -> list[tuple[str, ...]]:
    """Table rows (``STATS_HEAD``) of the latest counters per client."""
    return [(client, *(str(v[k]) for k in STATS_FIELDS)) for client, v in rows.items()]


# --- the disk image ------------------------------------------------------------------

IMAGE = "disk.img"


def image_size(system: Resolved) -> int:
    """The image's bytes: the disk's size; for an SD card the next power of
    two (QEMU's SD card model takes no other size; the I/O VM reads the
    card's capacity and refuses a configuration beyond it)."""
    disk = system.spec.disk
    assert disk is not None
    dev = system.platform.device(disk.device)
    if dev is not None and driver_of(dev) == "sdhci":
        return 1 << (disk.size - 1).bit_length()
    return disk.size


def make_image(system: Resolved, out: Path) -> None:
    """A blank raw image of :func:`image_size` in the build's ``out``
    directory (kept when it has that size already: what the clients wrote stays)."""
    disk = system.spec.disk
    image = out / IMAGE
    if disk is not None and not (image.is_file() and image.stat().st_size == image_size(system)):
        with open(image, "wb") as fh:
            fh.truncate(image_size(system))


def qemu_args(system: Resolved, out: str) -> list[str]:
    """QEMU options that attach the build directory ``out``'s raw image
    (:func:`make_image`) as a virtio-blk device on the I/O VM's virtio-mmio
    transport (modern), or as the SD card of its SD host controller (the
    board's SD bus N is its Nth controller by address: xlnx-zcu102)."""
    disk = system.spec.disk
    if disk is None:
        return []
    p = system.platform
    dev = p.device(disk.device)
    assert dev is not None
    if driver_of(dev) == "sdhci":
        index = sorted(d.base for d in p.devices if driver_of(d) == "sdhci").index(dev.base)
        return ["-drive", f"file={out}/{IMAGE},if=sd,index={index},format=raw"]
    first = min(d.base for d in p.devices if "virtio,mmio" in d.compatible)
    bus = (dev.base - first) // dev.size
    return ["-global", "virtio-mmio.force-legacy=false",
            "-drive", f"file={out}/{IMAGE},if=none,format=raw,id=bhdisk",
            "-device", f"virtio-blk-device,drive=bhdisk,bus=virtio-mmio-bus.{bus}"]


def parse_system(r: Reader, top: Keys, s: SystemSpec) -> SystemSpec:
    """``disk:``, expanded into one shmem region per client and parameters."""
    if "disk" not in top:
        return s
    disk = parse(r, top["disk"])
    vms, shmem = expand(disk, s.platform, s.vms, s.shmem)
    return replace(s, disk=disk, vms=vms, shmem=shmem)


# no C and no feature of its own: it becomes shared memory, doorbells and parameters
MECHANISM = Mechanism(
    name="shared_disk", rank=21, docs="docs/io.md#shared-disk", features={},
    platform_keys=(), system_keys=("disk",), vm_keys=(), region_keys=(), device_keys=(),
    parse_platform=None, parse_system=parse_system, parse_vm=None, parse_region=None,
    check_device=None, parse_device=None,
    check_platform=None, check=check, ipa_items=ipa_items, reserved_ram=None, guest_params=None,
    limits=(), emit_platform=None,
    emit_tables=None, emit_vm=emit_vm, emit_system=None, needs=needs,
)
