# SPDX-License-Identifier: Apache-2.0
"""Shared I/O: the ``io:`` section (docs/io.md).

One device of the platform (a virtio-net transport on QEMU ``virt``) is
passed through to an *I/O VM*; every client VM gets one shared-memory region
with two frame rings (``guests/lib/include/ioring.h``) and a doorbell in each
direction. This module parses the section, expands it into ordinary
``shmem`` regions and parameter-block entries (so layout, ``config.c`` and
device trees need nothing new), checks it, and computes what ``check``
reports: each client's guaranteed rate α and its delay bound Δ in the
bounded-delay model under work-conserving weighted round-robin by frame
(``guests/iovm/iosched.c``) on a device of ``capacity`` frames/s.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, TypeVar

from bulkhead.base.csource import CSource, Field, hexa, struct_rows
from bulkhead.base.errors import Diagnostic
from bulkhead.config.mechanism import Keys, Mechanism, Need, SystemView, VmView
from bulkhead.config.model import (
    PAGE,
    DiskClientSpec,
    DiskSpec,
    IoClientSpec,
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

KEYS = ("device", "vm", "capacity", "frame_rate", "mac", "ipa", "client_ipa", "doorbell_irq", "client_doorbell_irq",
        "virtio_ipa", "poll", "clients")
CLIENT_KEYS = ("vm", "queue", "weight", "mac", "rate_cap", "virtio")
VIRTIO_KINDS = {"net": 1}  # the virtio device IDs the hypervisor bridges
VIRTIO_SIZE = 0x1000  # the transport's page (hypervisor/core/virtio/virtio_mmio.h)

# mirrors guests/lib/include/ioring.h
SLOT_SIZE = 2048
CTRL_SIZE = 4096
MAX_SLOTS = 256
MAX_CLIENTS = 8  # IOVM_MAX_CLIENTS in guests/iovm
MAX_CAPACITY = 1_000_000
LEGACY_FRAME_RATE = ("io.frame_rate is now the device's capacity (frames/s it serves while anyone is "
                     "backlogged; the I/O VM is work-conserving, no longer one frame per fixed slot of "
                     "1/frame_rate s): rename it 'capacity' (measure it: bench/shared_io.py --calibrate)")

DEFAULT_MAC = bytes.fromhex("525400123456")  # QEMU's default NIC MAC
DEFAULT_IPA = 0x7000_0000
DEFAULT_DOORBELL = 120
DEFAULT_VIRTIO_IPA = 0x0B00_0000
MAC_RE = re.compile(r"[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}\Z")


def region_size(queue: int) -> int:
    """Bytes of a client's region: control page + two rings (ioring_region_size)."""
    return CTRL_SIZE + 2 * queue * SLOT_SIZE


def mac_text(mac: bytes) -> str:
    return ":".join(f"{b:02x}" for b in mac)


C = TypeVar("C")


def clients_of(r: Reader, m: dict[str, YNode], path: str, client: Callable[[YNode, str], C],
               most: int = MAX_CLIENTS) -> tuple[C, ...]:
    """The ``clients`` list of an ``io:`` or ``disk:`` mapping ``m`` (at
    ``path``): 1 to ``most`` entries, each read by ``client``."""
    q = join(path, "clients")
    clients = r.each(m["clients"], q, client, "a list of clients")
    if not clients:
        raise r.fail(m["clients"], q, "at least one client is required")
    if len(clients) > most:
        raise r.fail(m["clients"], q, f"at most {most} clients, got {len(clients)}")
    return clients


def ring_keys(r: Reader, m: dict[str, YNode], path: str, ipa: int, doorbell: int, client_doorbell: int,
              virtio_ipa: int) -> dict[str, int]:
    """The placement keys ``io:`` and ``disk:`` share (the regions' IPAs in
    the I/O VM and the clients, the doorbell SPIs, the virtio transports'
    IPA), each its default when absent."""

    def get(key: str, default: int, read: Callable[[YNode, str], int]) -> int:
        return read(m[key], join(path, key)) if key in m else default

    return {"ipa": get("ipa", ipa, r.address), "client_ipa": get("client_ipa", ipa, r.address),
            "doorbell_irq": get("doorbell_irq", doorbell, r.irq),
            "client_doorbell_irq": get("client_doorbell_irq", client_doorbell, r.irq),
            "virtio_ipa": get("virtio_ipa", virtio_ipa, r.address)}


def _mac(r: Reader, node: YNode, path: str) -> bytes:
    text = r.string(node, path, "a MAC address ('02:00:00:00:00:01')")
    if not MAC_RE.match(text):
        raise r.fail(node, path, f"expected a MAC address like '02:00:00:00:00:01', got '{text}'")
    mac = bytes(int(x, 16) for x in text.split(":"))
    if mac[0] & 1:
        raise r.fail(node, path, f"MAC address {text} is a multicast address (bit 0 of the first octet set)")
    return mac


def parse(r: Reader, node: YNode, path: str = "io") -> IoSpec:
    m = r.mapping(node, path, KEYS, ("device", "vm", "clients"),
                  "a mapping {device, vm, capacity, clients, ...}")
    if "capacity" in m and "frame_rate" in m:
        raise r.fail(m["frame_rate"], join(path, "frame_rate"),
                     "give 'capacity' only ('frame_rate' is its old name)")
    rate_key = "capacity" if "capacity" in m else "frame_rate"
    if rate_key not in m:
        raise r.fail(node, path, "missing required key 'capacity' (the device's frames/s)")

    def p(key: str) -> str:
        return join(path, key)

    def client(n: YNode, q: str) -> IoClientSpec:
        cm = r.mapping(n, q, CLIENT_KEYS, ("vm", "mac"), "a client {vm, mac, queue, weight, rate_cap, virtio}")
        return IoClientSpec(
            vm=r.string(cm["vm"], join(q, "vm"), "a VM name"),
            queue=r.integer(cm["queue"], join(q, "queue"), f"a queue size (integer 1-{MAX_SLOTS})", 1,
                            MAX_SLOTS) if "queue" in cm else 16,
            weight=r.integer(cm["weight"], join(q, "weight"), "a weight (integer 1-100)", 1, 100)
            if "weight" in cm else 1,
            mac=_mac(r, cm["mac"], join(q, "mac")),
            rate_cap=r.integer(cm["rate_cap"], join(q, "rate_cap"), "a rate cap in frames/s (integer >= 1)", 1)
            if "rate_cap" in cm else None,
            path=q,
            virtio=_virtio(r, cm["virtio"], join(q, "virtio")) if "virtio" in cm else None,
        )

    clients = clients_of(r, m, path, client)
    return IoSpec(
        device=r.string(m["device"], p("device"), "a device name"),
        vm=r.string(m["vm"], p("vm"), "a VM name"),
        capacity=r.integer(m[rate_key], p(rate_key), f"frames/s (integer 1-{MAX_CAPACITY})", 1, MAX_CAPACITY),
        mac=_mac(r, m["mac"], p("mac")) if "mac" in m else DEFAULT_MAC,
        clients=clients,
        path=path,
        legacy_frame_rate=rate_key == "frame_rate",
        poll=r.boolean(m["poll"], p("poll")) if "poll" in m else False,
        **ring_keys(r, m, path, DEFAULT_IPA, DEFAULT_DOORBELL, DEFAULT_DOORBELL, DEFAULT_VIRTIO_IPA),
    )


def _virtio(r: Reader, node: YNode, path: str) -> str:
    kind = r.string(node, path, "a virtio device kind ('net')")
    if kind not in VIRTIO_KINDS:
        raise r.fail(node, path, f"unknown virtio device '{kind}'; the hypervisor bridges: "
                                 f"{', '.join(VIRTIO_KINDS)}")
    return kind


def _shmem_index(shmem: tuple[ShmemSpec, ...], vm: str) -> int:
    """Index the next region mapped by ``vm`` will have within that VM."""
    return sum(1 for sh in shmem for mp in sh.maps if mp.vm == vm)


def expand(io: IoSpec, platform: Platform, vms: tuple[VmSpec, ...], shmem: tuple[ShmemSpec, ...]
           ) -> tuple[tuple[VmSpec, ...], tuple[ShmemSpec, ...]]:
    """One shared-memory region per client (appended to ``shmem``) and the
    parameter-block entries of the I/O VM and of bare-metal clients (a Linux
    client, always ``virtio: net``, finds its device in its device tree
    instead: gen_dts, ``virtio,mmio``)."""
    regions = list(shmem)
    io_params: list[tuple[str, str]] = []
    client_params: dict[str, list[tuple[str, str]]] = {}
    ipa = io.ipa
    for i, c in enumerate(io.clients):
        size = region_size(c.queue)
        io_index = _shmem_index(tuple(regions), io.vm)
        cl_index = _shmem_index(tuple(regions), c.vm)
        regions.append(ShmemSpec(
            index=len(regions), name=f"io{i}", size=size, pa=None,
            maps=(ShmemMapSpec(io.vm, ipa, io.doorbell_irq + i, io.path),
                  # a virtio client's doorbell goes to the hypervisor's bridge, its SPI is the device's
                  ShmemMapSpec(c.vm, io.client_ipa, None if c.virtio else io.client_doorbell_irq, c.path)),
            path=c.path,
        ))
        ipa += (size + PAGE - 1) // PAGE * PAGE
        io_params += [
            (f"io{i}_vm", c.vm), (f"io{i}_shm", str(io_index)), (f"io{i}_queue", str(c.queue)),
            (f"io{i}_weight", str(c.weight)), (f"io{i}_mac", mac_text(c.mac)),
            (f"io{i}_cap", str(c.rate_cap or 0)),
        ]
        client_params.setdefault(c.vm, []).extend(
            [("virtio_base", f"0x{io.virtio_ipa:x}"), ("virtio_irq", str(io.client_doorbell_irq))] if c.virtio else
            [("io_shm", str(cl_index)), ("io_queue", str(c.queue)), ("io_mac", mac_text(c.mac))])
    out_vms = []
    for vm in vms:
        extra: list[tuple[str, str]] = []
        if vm.name == io.vm:
            dev = platform.device(io.device)
            extra = [("io_clients", str(len(io.clients))), ("io_device", io.device),
                     ("io_driver", (driver_of(dev) if dev else None) or "virtio"),
                     ("io_base", f"0x{dev.base:x}" if dev else "0"),
                     ("io_irq", str(dev.irqs[0]) if dev and dev.irqs else "0"),
                     ("io_rate", str(io.capacity)), ("io_mac", mac_text(io.mac)),
                     ("io_poll", str(int(io.poll))), *io_params]
        elif vm.name in client_params:
            extra = client_params[vm.name]
        if extra and vm.type == "baremetal":
            vm = replace(vm, params=(*vm.params, *extra))
        out_vms.append(vm)
    return tuple(out_vms), tuple(regions)


def warnings(s: SystemSpec) -> list[Diagnostic]:
    """Warnings about ``io:``: the old key ``frame_rate``, whose meaning changed."""
    if s.io is None or not s.io.legacy_frame_rate:
        return []
    return [s.locs.diag(join(s.io.path, "frame_rate"), LEGACY_FRAME_RATE)]


def check(s: SystemSpec) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """(errors, warnings) about ``io:`` (:func:`warnings`)."""
    return _errors(s), warnings(s)


def _errors(s: SystemSpec) -> list[Diagnostic]:
    """Semantic rules of ``io:`` (the generated regions are checked as shmem)."""
    io = s.io
    if io is None:
        return []
    errs: list[Diagnostic] = []

    def err(path: str, msg: str) -> None:
        errs.append(s.locs.diag(path, msg))

    p = s.platform
    iovm = s.vm(io.vm)
    dev = p.device(io.device)
    if dev is None:
        known = ", ".join(d.name for d in p.devices if driver_of(d)) or "none"
        err(join(io.path, "device"), f"unknown device '{io.device}'; network devices of '{p.name}': {known}")
    elif driver_of(dev) is None:
        err(join(io.path, "device"), f"device '{io.device}' is not a network device the I/O VM drives "
                                      "(virtio-net over virtio-mmio, or a Cadence GEM)")
    elif not dev.irqs:
        err(join(io.path, "device"), f"device '{io.device}' has no interrupt")
    if iovm is None:
        err(join(io.path, "vm"), f"unknown VM '{io.vm}'")
    else:
        if iovm.type != "baremetal":
            err(join(io.path, "vm"), f"the I/O VM '{io.vm}' must be a bare-metal VM (type: baremetal)")
        if io.device not in iovm.devices:
            err(join(io.path, "device"), f"device '{io.device}' must be passed through to the I/O VM: "
                                          f"add it to {iovm.path}.devices")
        if not iovm.introspection:
            err(join(io.path, "vm"), f"the I/O VM '{io.vm}' gives its device the host physical addresses of "
                                      "its buffers (BH_HC_IPA_INFO): add 'introspection: true' to "
                                      f"{iovm.path}")
    seen_vm: dict[str, str] = {}
    seen_mac: dict[bytes, str] = {io.mac: join(io.path, "mac")}
    for c in io.clients:
        vm = s.vm(c.vm)
        if vm is None:
            err(join(c.path, "vm"), f"unknown VM '{c.vm}'")
        elif c.vm == io.vm:
            err(join(c.path, "vm"), f"VM '{c.vm}' is the I/O VM; it cannot also be a client")
        elif vm.type not in ("baremetal", "linux"):
            err(join(c.path, "vm"), f"client VM '{c.vm}' is of type {vm.type}; clients are bare-metal VMs "
                                     "(the ring runtime or virtio) or Linux VMs with 'virtio: net' (docs/io.md)")
        elif vm.type == "linux" and not c.virtio:
            err(c.path, f"Linux client '{c.vm}' needs 'virtio: net': the bulkhead_net module that served "
                        "Linux ring clients is removed; Debian's own virtio_net takes its place, through "
                        "the hypervisor's bridge to the same rings (docs/io.md \"VirtIO\")")
        if c.vm in seen_vm:
            err(join(c.path, "vm"), f"VM '{c.vm}' is a client twice (also {seen_vm[c.vm]})")
        seen_vm.setdefault(c.vm, join(c.path, "vm"))
        if c.mac in seen_mac:
            err(join(c.path, "mac"), f"MAC address {mac_text(c.mac)} is used twice (also {seen_mac[c.mac]})")
        seen_mac.setdefault(c.mac, join(c.path, "mac"))
        if c.virtio and vm is not None:
            errs.extend(s.locs.diag(join(c.path, "virtio"), msg) for msg in _virtio_errors(s, io, vm))
        if c.rate_cap is not None and c.rate_cap > io.capacity:
            err(join(c.path, "rate_cap"), f"rate cap {c.rate_cap} frames/s is above the device's capacity "
                                           f"{io.capacity}")
    return errs


def _virtio_errors(s: SystemSpec, io: IoSpec, vm: VmSpec) -> list[str]:
    return virtio_vm_errors(s, vm, io.client_doorbell_irq, "io.client_doorbell_irq")


def virtio_vm_errors(s: SystemSpec, vm: VmSpec, irq: int, irq_key: str) -> list[str]:
    """A virtio client's (net or blk): its VM takes the hypervisor's
    interrupts (the I/O VM's work comes as a physical SGI to its CPU), and
    its device's SPI ``irq`` (the client doorbell SPI ``irq_key``, which its
    region no longer uses) is free."""
    errs = []
    if vm.interrupts != "emulated":
        errs.append(f"VM '{vm.name}' has interrupts: {vm.interrupts}; a virtio device's receive work "
                    "comes through the hypervisor's interrupts (interrupts: emulated)")
    taken = {i for d in vm.devices if (dev := s.platform.device(d)) for i in dev.irqs}
    taken |= {mp.doorbell_irq for sh in s.shmem for mp in sh.maps if mp.vm == vm.name and mp.doorbell_irq}
    if s.io is not None and s.disk is not None and s.io.client_doorbell_irq == s.disk.client_doorbell_irq \
            and virtio_client(s.io, vm.name) and any(c.vm == vm.name and c.virtio for c in s.disk.clients):
        taken.add(irq)  # both devices would share one SPI
    if irq in taken:
        errs.append(f"the virtio device's SPI {irq} ({irq_key}) is taken in VM '{vm.name}' "
                    f"by a device, a doorbell or its other virtio device: give {irq_key} another")
    return errs


def virtio_client(io: IoSpec | None, vm: str) -> IoClientSpec | None:
    """VM ``vm``'s client entry if it has a virtio device."""
    return next((c for c in io.clients if c.vm == vm and c.virtio), None) if io else None


def virtio_region(io: IoSpec | None, vm: str) -> str | None:
    """The name of the region a virtio client's device is bridged to
    (the client's own view of it is the device, not a memory node)."""
    if io is None:
        return None
    return next((f"io{i}" for i, c in enumerate(io.clients) if c.vm == vm and c.virtio), None)


def ipa_items(s: SystemSpec, vm: VmSpec) -> list[tuple[str, Range, str]]:
    """A virtio client's transport page."""
    c = virtio_client(s.io, vm.name)
    if c is None or s.io is None:
        return []
    return [("the virtio transport", Range(s.io.virtio_ipa, VIRTIO_SIZE), join(c.path, "virtio"))]


def emit_vm(out: CSource, system: SystemView, vm: VmView) -> list[Field]:
    """A virtio client's device (struct cfg_virtio): its page, SPI and region."""
    io = system.spec.io
    c = virtio_client(io, vm.name)
    region = virtio_region(io, vm.name)
    if io is None or c is None or region is None or c.virtio is None:
        return []
    mac = "{ " + ", ".join(f"0x{b:02x}" for b in c.mac) + " }"
    return virtio_row(out, system, vm, ("virtio", VIRTIO_KINDS[c.virtio]), (io.virtio_ipa, io.client_doorbell_irq),
                      region, c.queue, ("mac", mac))


def virtio_row(out: CSource, system: SystemView, vm: VmView, name: tuple[str, int], where: tuple[int, int],
               region: str, queue: int, extra: tuple[str, str]) -> list[Field]:
    """The ``struct cfg_virtio`` row of a client's bridged device (net or
    blk): its field and symbol ``name[0]``, virtio device ID ``name[1]``,
    page and SPI ``where``, the index of region ``region`` among the VM's
    regions, the ring's ``queue`` and the kind's own ``extra`` field."""
    pos = next(i for i, sh in enumerate(system.spec.shmem) if sh.name == region)
    shm = _shmem_index(system.spec.shmem[:pos], vm.name)
    out.array(f"static const struct cfg_virtio vm{vm.index}_{name[0]}", struct_rows([[
        ("type", str(name[1])), ("ipa", hexa(where[0])), ("irq", str(where[1])), ("shm", str(shm)),
        ("queue", str(queue)), extra]]))
    return [(name[0], f"vm{vm.index}_{name[0]}")]


def needs(system: SystemView) -> list[Need]:
    """The virtio bridge for a client with a virtio device."""
    return virtio_needs(system.spec.io.clients if system.spec.io else ())


def virtio_needs(clients: Iterable[IoClientSpec | DiskClientSpec]) -> list[Need]:
    """The virtio bridge (feature VIRTIO) for each client with a virtio device."""
    return [Need("VIRTIO", f"vm {c.vm}", f"has a virtio-{c.virtio} device ({c.path}.virtio)")
            for c in clients if c.virtio]


# --- guarantees ---------------------------------------------------------------


@dataclass(frozen=True)
class Guarantee:
    """A client's bounded-delay service guarantee (frames/s and seconds)."""

    vm: str
    weight: int
    share: Fraction  # weight / total weight
    alpha: Fraction  # frames/s guaranteed while backlogged
    delta: Fraction  # seconds: longest wait for service while backlogged
    gap_slots: int  # service slots of other clients between two of its frames, at most


def guarantees(io: IoSpec, disk: DiskSpec | None = None) -> list[Guarantee]:
    """Work-conserving weighted round-robin by frame on a device of capacity
    C frames/s (guests/iovm/iosched.c; docs/io.md has the proof sketch):
    while anyone is backlogged the I/O VM serves a frame every 1/C s at
    most, turn by turn, client j taking up to w_j frames of its turn and an
    idle client none. A client i that stays backlogged waits at most for
    the frame in service and the others' turns, W - w_i frames, so its
    supply in any interval t of its backlog is at least alpha * (t - delta)
    with alpha = w_i / W * C and delta = (W - w_i + 1) / C. A rate cap c (a
    token bucket of 2 w_i frames) below alpha lowers alpha to c and adds
    1/c to delta. Idle clients' turns go to the others: these are lower
    bounds, a client alone gets the whole device. When the same I/O VM
    serves ``disk`` too, a frame's time is 1/C plus one disk request's
    (:func:`cpu_shared`)."""
    per_frame, _ = cpu_shared(io, disk)
    out = []
    for c, w in zip(io.clients, wrr([c.weight for c in io.clients], 1 / Fraction(io.capacity) + per_frame),
                    strict=True):
        alpha, delta = w.rate, w.delta
        if c.rate_cap is not None and c.rate_cap < alpha:
            alpha = Fraction(c.rate_cap)
            delta += 1 / Fraction(c.rate_cap)
        out.append(Guarantee(c.vm, c.weight, w.share, alpha, delta, w.gap))
    return out


@dataclass(frozen=True)
class Turn:
    """A client's bound under work-conserving weighted round-robin."""

    share: Fraction  # w_i / W
    rate: Fraction  # services/s while backlogged, at least
    delta: Fraction  # seconds: longest wait for its next service while backlogged
    gap: int  # services of others between two of its own, at most


def wrr(weights: Sequence[int], service: Fraction) -> list[Turn]:
    """The bound of each client of weight ``weights[i]`` when one service
    takes at most ``service`` seconds (docs/io.md "Guarantees"): w_i of
    every W services, so rate w_i / W / service, and a wait of at most
    the service in progress and the others' W - w_i."""
    total = sum(weights)
    return [Turn(Fraction(w, total), Fraction(w, total) / service, (total - w + 1) * service, total - w)
            for w in weights]


def cpu_shared(io: IoSpec | None, disk: DiskSpec | None) -> tuple[Fraction, Fraction]:
    """(seconds added to each frame's service, to each disk request's) by
    the other device when one I/O VM serves ``io`` and ``disk``: its loop
    serves at most one request between two frames and one frame between
    two requests (guests/iovm/iovm.c), so each waits at most for one of the
    other's, 1 / ``disk.iops`` or 1 / ``io.capacity``; (0, 0) otherwise."""
    if io is None or disk is None or io.vm != disk.vm:
        return Fraction(0), Fraction(0)
    return 1 / Fraction(disk.iops), 1 / Fraction(io.capacity)


def report(system: Resolved) -> str:
    io, disk = system.spec.io, system.spec.disk
    if io is None:
        return ""
    lines = ["", f"shared I/O: device {io.device} -> I/O VM {io.vm}, capacity {io.capacity} frames/s "
                 "(work-conserving weighted round-robin by frame)"]
    if io.poll:
        lines.append("  the I/O VM busy-waits when idle (poll: its own CPU, no wake-up per frame)")
    per_frame, _ = cpu_shared(io, disk)
    if per_frame and disk is not None:
        lines.append(f"  the I/O VM serves the disk too: a frame's time {1e6 / io.capacity:.1f} us + one disk "
                     f"request's {float(per_frame) * 1e6:.1f} us (effective capacity "
                     f"{float(1 / (1 / Fraction(io.capacity) + per_frame)):.1f} frames/s)")
    for c, g in zip(io.clients, guarantees(io, disk), strict=True):
        cap = f", cap {c.rate_cap}/s" if c.rate_cap is not None else ""
        lines.append(f"  {g.vm}: queue {c.queue}, weight {g.weight} ({float(g.share) * 100:.1f}%){cap}, "
                     f"mac {mac_text(c.mac)}: alpha >= {float(g.alpha):.1f} frames/s, "
                     f"delta <= {float(g.delta) * 1e6:.1f} us ({g.gap_slots} frames of others)")
        if c.virtio:
            lines.append(f"  {g.vm}: virtio-{c.virtio} at 0x{io.virtio_ipa:x}, SPI {io.client_doorbell_irq} "
                         "(the hypervisor bridges it to the rings)")
    return "\n".join(lines) + "\n"


def document(io: IoSpec, disk: DiskSpec | None = None) -> dict[str, Any]:
    return {
        "device": io.device, "vm": io.vm, "capacity": io.capacity, "mac": mac_text(io.mac), "poll": io.poll,
        "disk_us_per_frame": float(cpu_shared(io, disk)[0]) * 1e6,
        "clients": [
            {"vm": c.vm, "queue": c.queue, "weight": c.weight, "mac": mac_text(c.mac), "rate_cap": c.rate_cap,
             "virtio": c.virtio,
             "alpha_fps": float(g.alpha), "delta_us": float(g.delta) * 1e6, "gap_slots": g.gap_slots}
            for c, g in zip(io.clients, guarantees(io, disk), strict=True)
        ],
    }


GEM_COMPATIBLE = "cdns,gem"


def driver_of(dev: PlatformDevice) -> str | None:
    """The I/O VM's driver for a platform device (guests/iovm/netdev.h):
    "virtio" for a virtio-mmio transport, "gem" for a Cadence GEM, else None."""
    if "virtio,mmio" in dev.compatible:
        return "virtio"
    if GEM_COMPATIBLE in dev.compatible:
        return "gem"
    return None


# --- bulkhead run --stats ------------------------------------------------------------

STATS_RE = re.compile(r"\[[^\]\s]+\] iovm: stats client=(?P<client>\S+) (?P<rest>.*?)\s*$")
STATS_FIELDS = ("tx", "tx_bytes", "rx", "rx_bytes", "rx_drops", "malformed", "runt", "spoofed", "alpha_fps",
                "delta_us")
# BAD: what the I/O VM dropped of the client's own frames (malformed slots,
# runts, forged source MACs); narrow enough for an 80-column terminal
STATS_HEAD = ("CLIENT", "TX", "TX_BYTES", "RX", "RX_BYTES", "DROPS", "BAD", "ALPHA_FPS", "DELTA_US")


def parse_stats(line: str, pattern: re.Pattern[str] = STATS_RE, fields: tuple[str, ...] = STATS_FIELDS
                ) -> tuple[str, dict[str, int]] | None:
    """(client, counters) of one of the I/O VM's ``[<vm>] iovm: stats client=...``
    console lines (guests/iovm: every ``stats_ms`` and at the end), or None;
    or of another ``pattern`` (groups ``client``, ``rest``) with ``fields``."""
    m = pattern.match(line)
    if m is None:
        return None
    values = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", m["rest"])}
    if any(k not in values for k in fields):
        return None
    return m["client"], values


def stats_cells(rows: dict[str, dict[str, int]]) -> list[tuple[str, ...]]:
    """Table rows (``STATS_HEAD``) of the latest counters per client, in the
    order the clients first reported."""
    return [(client, *(str(v[k]) for k in ("tx", "tx_bytes", "rx", "rx_bytes", "rx_drops")),
             str(v["malformed"] + v["runt"] + v["spoofed"]), str(v["alpha_fps"]), str(v["delta_us"]))
            for client, v in rows.items()]


def qemu_args(system: Resolved, netdev: str | None) -> list[str]:
    """QEMU options that attach the I/O VM's device to ``netdev`` (a
    ``-netdev`` value without ``id``; default: user-mode networking): a
    virtio-net device on its virtio-mmio transport (modern, at the bus of the
    device's address), or the NIC of its Cadence GEM. QEMU's ZynqMP gives the
    -net NICs to GEM 0, 1, ... in order (``qemu_configure_nic_device``): the
    GEMs before the I/O VM's get a NIC on a hub of their own, unconnected."""
    io = system.spec.io
    if io is None:
        return []
    p = system.platform
    dev = p.device(io.device)
    assert dev is not None
    if driver_of(dev) == "gem":
        gems = sorted((d for d in p.devices if driver_of(d) == "gem"), key=lambda d: d.base)
        out: list[str] = []
        for i in range(gems.index(dev)):
            out += ["-netdev", f"hubport,id=bhgem{i},hubid={90 + i}",
                    "-net", f"nic,model=cadence_gem,netdev=bhgem{i}"]
        return [*out, "-netdev", f"{netdev or 'user'},id=bhio",
                "-net", f"nic,model=cadence_gem,netdev=bhio,macaddr={mac_text(io.mac)}"]
    first = min(d.base for d in p.devices if "virtio,mmio" in d.compatible)
    bus = (dev.base - first) // dev.size
    return ["-global", "virtio-mmio.force-legacy=false",
            "-netdev", f"{netdev or 'user'},id=bhio",
            "-device", f"virtio-net-device,netdev=bhio,mac={mac_text(io.mac)},bus=virtio-mmio-bus.{bus}"]


def parse_system(r: Reader, top: Keys, s: SystemSpec) -> SystemSpec:
    """``io:``, expanded into one shmem region per client and parameters
    for the I/O VM and the clients (so later stages need nothing new)."""
    if "io" not in top:
        return s
    io = parse(r, top["io"])
    vms, shmem = expand(io, s.platform, s.vms, s.shmem)
    return replace(s, io=io, vms=vms, shmem=shmem)


# the rings become shared memory, doorbells and parameters; a virtio client's
# device is the hypervisor's bridge (core/virtio, docs/io.md "VirtIO")
MECHANISM = Mechanism(
    name="shared_io", rank=20, docs="docs/io.md", features={"VIRTIO": ("core/virtio/*.c",)},
    platform_keys=(), system_keys=("io",), vm_keys=(), region_keys=(), device_keys=(),
    parse_platform=None, parse_system=parse_system, parse_vm=None, parse_region=None,
    check_device=None, parse_device=None,
    check_platform=None, check=check, ipa_items=ipa_items, reserved_ram=None, guest_params=None,
    limits=(), emit_platform=None,
    emit_tables=None, emit_vm=emit_vm, emit_system=None, needs=needs,
)
