# SPDX-License-Identifier: Apache-2.0
"""PCIe passthrough (docs/dma.md "PCI"): the platform's ECAM host bridge,
VMs' ``pci:`` entries, and the plan every later stage uses.

- Platform ``pci:``: the host bridge the hypervisor owns (ECAM, bus range,
  memory windows, INTx SPIs and their swizzle, where VMs see their filtered
  ECAM) and the functions that are always on its bus (``functions:``).
- VM ``pci:``: functions by ``"BB:DD.F"`` or ``"VVVV:DDDD"``, or a QEMU
  device the run adds to the bus (``{qemu: edu}``, ``{qemu: nvme, addr:
  "00:03.0"}``); the toolchain then picks its slot so that no two VMs share
  an INTx SPI.

The plan (:func:`plan`) names, per VM, each function's address, IDs, INTx
SPI and the window of the 32-bit memory space its BARs get at boot (the
hypervisor sizes and assigns them, ``hypervisor/lib/pcienum.c``).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

from bulkhead.base.csource import CSource, Field, cstr, hexa, struct_rows
from bulkhead.base.errors import Diagnostic
from bulkhead.config import dma
from bulkhead.config.mechanism import Keys, Mechanism, Need, SystemView, VmView
from bulkhead.config.model import (
    ECAM_BUS,
    PAGE,
    MiB,
    PciBridgeSpec,
    PciEntrySpec,
    Platform,
    PlatformFunction,
    PlatformPci,
    Range,
    Resolved,
    SystemSpec,
    VmSpec,
)
from bulkhead.config.reader import Reader, join
from bulkhead.config.yamlpos import YMap, YNode, YScalar, describe

BDF_RE = re.compile(r"([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])\Z")
ID_RE = re.compile(r"([0-9a-fA-F]{4}):([0-9a-fA-F]{4})\Z")
MAX_FUNCS_PER_VM = 8  # VPCI_MAX_FUNCS in hypervisor/core/pci/vpci.c
MAX_FUNCS = 32  # PCIENUM_MAX_FUNCS in hypervisor/lib/pcienum.h
MAX_WINDOW = 256 * MiB
# GITS_TRANSLATER, the register a device's MSI write goes to: in the ITS's
# second 64 KiB frame (GICv3 architecture, IHI 0069, "ITS register map")
ITS_TRANSLATER = 0x10040


@dataclass(frozen=True)
class QemuModel:
    """A QEMU PCI device the toolchain can put on the command line."""

    vendor: int
    device: int
    pin: int  # 1 = INTA
    dma: bool


# vendor:device and pin from QEMU's hw/misc/edu.c (1234:11e8, pin A),
# hw/virtio/virtio-pci.c (modern virtio-net: 1af4:1000 + 0x40 + id 1, pin A)
# and hw/nvme/ctrl.c (1b36:0010, pin A).
MODELS: dict[str, QemuModel] = {
    "edu": QemuModel(0x1234, 0x11E8, 1, True),
    "virtio-net-pci": QemuModel(0x1AF4, 0x1041, 1, True),
    "nvme": QemuModel(0x1B36, 0x0010, 1, True),
}
NVME_IMAGE_SIZE = 8 * MiB


@dataclass(frozen=True)
class BridgeModel:
    """A QEMU bridge the toolchain can put on the bus (``pci_bridges:``)."""

    vendor: int
    device: int
    # the requester ID its secondary side's DMA carries upstream: "bridge"
    # (its own, a conventional PCI-to-PCI bridge) or "secondary" (secondary
    # bus, devfn 0: a PCIe-to-PCI bridge, PCIe-to-PCI/PCI-X Bridge spec 2.3)
    alias: str
    first_slot: int  # lowest usable slot on its secondary bus


# hw/pci-bridge/pci_bridge_dev.c (1b36:0001, conventional PCI: its
# secondary bus is no PCIe bus; put on the command line with shpc=off, so
# slot 0 is usable) and hw/pci-bridge/pcie_pci_bridge.c (1b36:000e, a PCIe
# capability of type PCI_EXP_TYPE_PCI_BRIDGE; its hot-plug controller,
# always on, refuses slot 0). Aliasing: hw/pci/pci.c
# pci_device_get_iommu_bus_devfn, which gives the SMMU the alias of every
# conventional bus between a function and the root complex.
BRIDGES: dict[str, BridgeModel] = {
    "pci-bridge": BridgeModel(0x1B36, 0x0001, "bridge", 0),
    "pcie-pci-bridge": BridgeModel(0x1B36, 0x000E, "secondary", 1),
}


@dataclass(frozen=True)
class Bridge:
    """A bridge of the config, with the secondary bus the hypervisor gives it."""

    bdf: int
    qemu: str
    sec: int
    path: str

    @property
    def addr(self) -> str:
        return bdf_text(self.bdf)

    @property
    def model(self) -> BridgeModel:
        return BRIDGES[self.qemu]

    @property
    def qemu_id(self) -> str:
        return f"bhbr{self.bdf:x}"


@dataclass(frozen=True)
class Topology:
    """The bridges below the host bridge, by the bus they lead to."""

    bus_first: int
    by_sec: dict[int, Bridge]

    def root_pin(self, bdf: int, pin: int) -> int | None:
        """The INTx line (0-3: INTA-INTD) a function's pin (1-4) reaches at
        the host bridge: at each bridge up to the root bus the standard
        swizzle, pin' = (pin + device) mod 4, then the same at the root bus
        (the host bridge's interrupt-map); None without a pin or when no
        bridge leads to the function's bus. lib/pcienum.c computes the same
        (pcienum_root_pin; both checked against tests/host/pci_swizzle.txt)."""
        if not 1 <= pin <= 4:
            return None
        line = pin - 1
        for _ in range(256):
            line = (line + ((bdf >> 3) & 31)) % 4
            if bdf >> 8 == self.bus_first:
                return line
            bridge = self.by_sec.get(bdf >> 8)
            if bridge is None:
                return None
            bdf = bridge.bdf
        return None

    def requester_id(self, bdf: int) -> tuple[int, Bridge | None]:
        """The requester ID the function's DMA reaches the root complex (and
        so the SMMU) with, and the bridge whose alias it is (None: its own):
        every conventional bus on the way replaces it, with the bridge's own
        ID or, behind a PCIe-to-PCI bridge, (secondary bus, devfn 0)."""
        sid, by, bus = bdf, None, bdf >> 8
        while bus != self.bus_first and bus in self.by_sec:
            by = self.by_sec[bus]
            sid = by.sec << 8 if by.model.alias == "secondary" else by.bdf
            bus = by.bdf >> 8
        return sid, by


@dataclass(frozen=True)
class Function:
    """A function given to a VM, resolved."""

    vm: str
    vm_index: int
    bdf: int
    vendor: int
    device: int
    pin: int
    spi: int  # 0: no pin
    qemu: str | None
    path: str
    sid: int = -1  # the requester ID its DMA carries (-1: its own, bdf)
    alias_of: Bridge | None = None  # the bridge whose alias sid is
    doorbell: int = 0  # IPA of its VM's GITS_TRANSLATER: MSI and MSI-X shown (0: hidden, INTx only)

    @property
    def stream_id(self) -> int:
        return self.bdf if self.sid < 0 else self.sid

    @property
    def addr(self) -> str:
        return bdf_text(self.bdf)

    @property
    def label(self) -> str:
        return f"{self.addr} {self.qemu or f'{self.vendor:04x}:{self.device:04x}'}"


@dataclass(frozen=True)
class Plan:
    functions: tuple[Function, ...]
    windows: dict[str, Range]  # VM name -> its BAR window
    errors: tuple[Diagnostic, ...]
    bridges: tuple[Bridge, ...] = ()

    def of(self, vm: str) -> tuple[Function, ...]:
        return tuple(f for f in self.functions if f.vm == vm)


def bdf_text(bdf: int) -> str:
    return f"{bdf >> 8:02x}:{(bdf >> 3) & 31:02x}.{bdf & 7:x}"


def _bdf(r: Reader, node: YNode, path: str) -> int:
    text = r.string(node, path, 'a PCI address "BB:DD.F"')
    m = BDF_RE.match(text)
    if m is None:
        raise r.fail(node, path, f'expected a PCI address "BB:DD.F" (hex, e.g. "00:02.0"), got \'{text}\'')
    return int(m[1], 16) << 8 | int(m[2], 16) << 3 | int(m[3])


def _id(r: Reader, node: YNode, path: str) -> tuple[int, int]:
    text = r.string(node, path, 'a PCI ID "VVVV:DDDD"')
    m = ID_RE.match(text)
    if m is None:
        raise r.fail(node, path, f'expected a PCI ID "VVVV:DDDD" (hex), got \'{text}\'')
    return int(m[1], 16), int(m[2], 16)


def _parse_host(r: Reader, node: YNode) -> PlatformPci:
    path = "pci"
    keys = ("ecam", "buses", "mmio32", "mmio64", "intx", "vm_ecam", "qemu_bus", "functions")
    m = r.mapping(node, path, keys, ("ecam", "buses", "mmio32", "intx", "vm_ecam"))
    buses = r.seq(m["buses"], join(path, "buses"), "a bus range [first, last]")
    if len(buses) != 2:
        raise r.fail(m["buses"], join(path, "buses"), "expected a bus range [first, last]")
    first = r.integer(buses[0], join(path, "buses[0]"), "a bus number (0-255)", 0, 255)
    last = r.integer(buses[1], join(path, "buses[1]"), "a bus number (0-255)", first, 255)
    intx = r.each(m["intx"], join(path, "intx"), r.irq)
    if len(intx) != 4:
        raise r.fail(m["intx"], join(path, "intx"), "expected the 4 SPIs of INTA-INTD")
    ecam = r.range(m["ecam"], join(path, "ecam"))
    if ecam.size < (last + 1) * ECAM_BUS:
        raise r.fail(m["ecam"], join(path, "ecam"), f"an ECAM of {ecam.size:#x} bytes does not reach bus {last}")

    def function(n: YNode, q: str) -> PlatformFunction:
        f = r.mapping(n, q, ("addr", "id", "pin", "name", "reserved"), ("addr", "id", "name"))
        vendor, device = _id(r, f["id"], join(q, "id"))
        return PlatformFunction(
            bdf=_bdf(r, f["addr"], join(q, "addr")), vendor=vendor, device=device,
            pin=r.integer(f["pin"], join(q, "pin"), "an interrupt pin (0 none, 1-4 INTA-INTD)", 0, 4)
            if "pin" in f else 0,
            name=r.name(f["name"], join(q, "name"), "a function name"),
            reserved=r.boolean(f["reserved"], join(q, "reserved")) if "reserved" in f else False,
            path=q,
        )

    return PlatformPci(
        ecam=ecam, bus_first=first, bus_last=last,
        mmio32=r.range(m["mmio32"], join(path, "mmio32")),
        mmio64=r.range(m["mmio64"], join(path, "mmio64")) if "mmio64" in m else None,
        intx=(intx[0], intx[1], intx[2], intx[3]),
        vm_ecam=r.address(m["vm_ecam"], join(path, "vm_ecam")),
        qemu_bus=r.text(m["qemu_bus"], join(path, "qemu_bus")) if "qemu_bus" in m else "pcie.0",
        functions=r.each(m["functions"], join(path, "functions"), function) if "functions" in m else (),
    )


def _parse_entries(r: Reader, node: YNode, path: str) -> tuple[PciEntrySpec, ...]:
    def entry(n: YNode, q: str) -> PciEntrySpec:
        if isinstance(n, YScalar) and isinstance(n.value, str):
            r.visit(n, q)
            if BDF_RE.match(n.value):
                return PciEntrySpec(_bdf(r, n, q), None, None, None, q)
            if ID_RE.match(n.value):
                vendor, device = _id(r, n, q)
                return PciEntrySpec(None, vendor, device, None, q)
            raise r.fail(n, q, f'expected a PCI address "BB:DD.F", an ID "VVVV:DDDD" or {{qemu: MODEL}}, '
                               f"got '{n.value}'")
        if not isinstance(n, YMap):
            raise r.fail(n, q, f'expected a PCI address "BB:DD.F", an ID "VVVV:DDDD" or {{qemu: MODEL}}, '
                               f"got {describe(n)}")
        on_dma_fault = dma.parse_fault_policy(r, n, q)
        m = r.mapping(n, q, ("qemu", "addr", "msi", dma.FAULT_KEY), ("qemu",))
        model = r.choice(m["qemu"], join(q, "qemu"), tuple(MODELS))
        bdf = _bdf(r, m["addr"], join(q, "addr")) if "addr" in m else None
        msi = r.boolean(m["msi"], join(q, "msi")) if "msi" in m else None
        return PciEntrySpec(bdf, None, None, model, q, on_dma_fault, msi)

    return r.each(node, path, entry, "a list of PCI functions")


def parse_bridges(r: Reader, node: YNode) -> tuple[PciBridgeSpec, ...]:
    """``pci_bridges:``: bridges QEMU adds to the bus, ``{qemu: MODEL, addr: "BB:DD.F"}``."""
    def bridge(n: YNode, q: str) -> PciBridgeSpec:
        m = r.mapping(n, q, ("qemu", "addr"), ("qemu", "addr"), 'a bridge {qemu: MODEL, addr: "BB:DD.F"}')
        return PciBridgeSpec(_bdf(r, m["addr"], join(q, "addr")), r.choice(m["qemu"], join(q, "qemu"), tuple(BRIDGES)),
                             q)

    return r.each(node, "pci_bridges", bridge, "a list of PCI bridges")


def _topology(s: SystemSpec, pci: PlatformPci, errors: list[Diagnostic]) -> Topology:
    """The config's bridges with the bus numbers the hypervisor gives them
    (lib/pcienum.c: the next free number to each bridge found, depth first,
    in the order of the bus scan)."""
    at = s.locs.diag
    specs: dict[int, PciBridgeSpec] = {}
    for b in s.pci_bridges:
        if b.bdf in specs:
            errors.append(at(join(b.path, "addr"), f"{bdf_text(b.bdf)} is already taken by {specs[b.bdf].path}"))
            continue
        specs[b.bdf] = b
    by_sec: dict[int, Bridge] = {}
    numbered: set[int] = set()
    next_bus = pci.bus_first + 1

    def visit(bus: int) -> None:
        nonlocal next_bus
        for bdf in sorted(b for b in specs if b >> 8 == bus):
            spec = specs[bdf]
            numbered.add(bdf)
            why = _slot_error(by_sec, bdf)
            if why:
                errors.append(at(join(spec.path, "addr"), why))
            if next_bus > pci.bus_last:
                errors.append(at(spec.path, f"no bus number left for the bridge at {bdf_text(bdf)}: the hypervisor "
                                            f"enumerates buses {pci.bus_first}-{pci.bus_last}"))
                continue
            bridge = Bridge(bdf, spec.qemu, next_bus, spec.path)
            next_bus += 1
            by_sec[bridge.sec] = bridge
            visit(bridge.sec)

    visit(pci.bus_first)
    for bdf, spec in specs.items():
        if bdf not in numbered:
            errors.append(at(join(spec.path, "addr"), _no_bus(pci, by_sec, bdf >> 8)))
    return Topology(pci.bus_first, by_sec)


def _no_bus(pci: PlatformPci, by_sec: dict[int, Bridge], bus: int) -> str:
    buses = ", ".join(f"{b:02x} (behind {br.qemu} {br.addr})" for b, br in sorted(by_sec.items()))
    return (f"no bridge leads to bus {bus:02x}: the root bus is {pci.bus_first:02x}"
            + (f", bridges lead to {buses}" if buses else ", and no bridge of pci_bridges leads to another bus"))


def _slot_error(by_sec: dict[int, Bridge], bdf: int) -> str | None:
    bridge = by_sec.get(bdf >> 8)
    if bridge is None or (bdf >> 3) & 31 >= bridge.model.first_slot:
        return None
    return (f"slot {(bdf >> 3) & 31} behind the {bridge.qemu} at {bridge.addr} is not usable (QEMU's hot-plug "
            f"controller of that bridge takes slots {bridge.model.first_slot}-31)")


@dataclass
class _Known:
    bdf: int
    vendor: int
    device: int
    pin: int
    qemu: str | None
    reserved: bool
    where: str  # what created it, for messages


def _spi(pci: PlatformPci, topo: Topology, bdf: int, pin: int) -> int:
    line = topo.root_pin(bdf, pin)
    return 0 if line is None else pci.intx[line]


Entries = list[tuple[VmSpec, PciEntrySpec]]


def plan(s: SystemSpec) -> Plan:
    """Every VM's functions and windows, and the errors found on the way
    (:func:`check` reports them)."""
    p = s.platform
    errors: list[Diagnostic] = []
    at = s.locs.diag
    entries = [(vm, e) for vm in s.vms for e in vm.pci]
    if not entries and not s.pci_bridges:
        return Plan((), {}, ())
    pci = p.pci
    if pci is None:
        where = entries[0][1].path if entries else "pci_bridges"
        return Plan((), {}, (at(where, f"platform '{p.name}' has no PCI host bridge ('pci:' in its file)"),))

    known: dict[int, _Known] = {f.bdf: _Known(f.bdf, f.vendor, f.device, f.pin, None, f.reserved,
                                               f"platform function '{f.name}'") for f in pci.functions}
    topo = _topology(s, pci, errors)
    for br in topo.by_sec.values():
        if br.bdf in known:
            errors.append(at(join(br.path, "addr"), f"{br.addr} is already taken by {known[br.bdf].where}"))
            continue
        known[br.bdf] = _Known(br.bdf, br.model.vendor, br.model.device, 0, br.qemu, True, f"{br.path} ({br.qemu})")
    placed = _place_qemu_devices(s, pci, topo, entries, known, errors)
    functions = _assign(s, pci, topo, entries, known, placed, errors)
    _check_shared_lines(s, functions, errors)
    return Plan(tuple(functions), _windows(s, pci, functions), tuple(errors), tuple(topo.by_sec.values()))


def _place_qemu_devices(s: SystemSpec, pci: PlatformPci, topo: Topology, entries: Entries,
                        known: dict[int, _Known], errors: list[Diagnostic]) -> dict[int, _Known]:
    """Give the QEMU devices of ``entries`` their addresses (added to
    ``known``); the devices, by the entry's ``id``."""
    at = s.locs.diag
    placed: dict[int, _Known] = {}  # the QEMU devices, by the entry's path index
    owner_spi: dict[int, str] = {}  # SPI -> VM
    created: list[tuple[VmSpec, PciEntrySpec, QemuModel]] = []
    for vm, e in entries:
        if e.qemu is not None:
            created.append((vm, e, MODELS[e.qemu]))
    # QEMU devices at a given address first, then the rest in config order
    for vm, e, model in created:
        if e.bdf is None:
            continue
        if e.bdf >> 8 != pci.bus_first and e.bdf >> 8 not in topo.by_sec:
            errors.append(at(join(e.path, "addr"), f"a QEMU device goes on the root bus or behind a bridge of "
                                                   f"pci_bridges: {_no_bus(pci, topo.by_sec, e.bdf >> 8)}"))
            continue
        why = _slot_error(topo.by_sec, e.bdf)
        if why:
            errors.append(at(join(e.path, "addr"), why))
            continue
        if e.bdf in known:
            errors.append(at(join(e.path, "addr"), f"{bdf_text(e.bdf)} is already taken by {known[e.bdf].where}"))
            continue
        known[e.bdf] = _Known(e.bdf, model.vendor, model.device, model.pin, e.qemu, False, f"{e.path} ({e.qemu})")
        placed[id(e)] = known[e.bdf]
        owner_spi.setdefault(_spi(pci, topo, e.bdf, model.pin), vm.name)
    for vm, e, model in created:
        if e.bdf is not None:
            continue
        slots = [d for d in range(1, 32) if not any((b >> 3) & 31 == d and b >> 8 == pci.bus_first for b in known)]
        fits = [d for d in slots if owner_spi.get(_spi(pci, topo, pci.bus_first << 8 | d << 3, model.pin), vm.name)
                == vm.name]
        if not fits:
            errors.append(at(e.path, f"no free slot on bus {pci.bus_first:02x} whose INTx SPI no other VM uses"))
            continue
        bdf = pci.bus_first << 8 | fits[0] << 3
        known[bdf] = _Known(bdf, model.vendor, model.device, model.pin, e.qemu, False, f"{e.path} ({e.qemu})")
        placed[id(e)] = known[bdf]
        owner_spi.setdefault(_spi(pci, topo, bdf, model.pin), vm.name)

    return placed


def _assign(s: SystemSpec, pci: PlatformPci, topo: Topology, entries: Entries, known: dict[int, _Known],
            placed: dict[int, _Known], errors: list[Diagnostic]) -> list[Function]:
    """The function each entry names, given to its VM."""
    at = s.locs.diag
    listing = ", ".join(f"{bdf_text(k.bdf)} {k.vendor:04x}:{k.device:04x}" for k in known.values()
                        if not k.reserved) or "none"
    taken: dict[int, str] = {}
    functions: list[Function] = []
    for vm, e in entries:
        k: _Known | None
        if e.qemu is not None:
            k = placed.get(id(e))
            if k is None:
                continue  # reported above
        elif e.bdf is not None:
            k = known.get(e.bdf)
            if k is None:
                errors.append(at(e.path, f"unknown PCI function {bdf_text(e.bdf)}; the bus has: {listing}"))
                continue
        else:
            matches = [c for c in known.values() if (c.vendor, c.device) == (e.vendor, e.device)]
            if not matches:
                errors.append(at(e.path, f"no PCI function {e.vendor:04x}:{e.device:04x}; the bus has: {listing}"))
                continue
            if len(matches) > 1:
                errors.append(at(e.path, f"{len(matches)} functions are {e.vendor:04x}:{e.device:04x} ("
                                         + ", ".join(bdf_text(c.bdf) for c in matches) + "): name one by address"))
                continue
            k = matches[0]
        if k.reserved:
            errors.append(at(e.path, f"PCI function {bdf_text(k.bdf)} is the hypervisor's ({k.where})"))
            continue
        if k.bdf in taken:
            errors.append(at(e.path, f"PCI function {bdf_text(k.bdf)} is already given to {taken[k.bdf]}"))
            continue
        if k.bdf >> 8 != pci.bus_first and k.bdf >> 8 not in topo.by_sec:
            errors.append(at(e.path, f"PCI function {bdf_text(k.bdf)}: {_no_bus(pci, topo.by_sec, k.bdf >> 8)}"))
            continue
        taken[k.bdf] = f"VM '{vm.name}' ({e.path})"
        sid, alias_of = topo.requester_id(k.bdf)
        functions.append(Function(vm.name, vm.index, k.bdf, k.vendor, k.device, k.pin,
                                  _spi(pci, topo, k.bdf, k.pin), k.qemu, e.path, sid, alias_of,
                                  _doorbell(s, e, errors)))

    return functions


def _doorbell(s: SystemSpec, e: PciEntrySpec, errors: list[Diagnostic]) -> int:
    """Where the function's MSI writes go (its VM's GITS_TRANSLATER), 0: MSI
    and MSI-X hidden (``msi: false``, or no ITS on the platform)."""
    its = s.platform.gic.its
    if e.msi and not its:
        errors.append(s.locs.diag(join(e.path, "msi"), f"MSI needs an ITS and platform '{s.platform.name}' has "
                                                        "none (gic.its): drop 'msi: true' to use INTx"))
    return its + ITS_TRANSLATER if its and e.msi is not False else 0


def _check_shared_lines(s: SystemSpec, functions: list[Function], errors: list[Diagnostic]) -> None:
    """No INTx line or requester-ID alias shared by two VMs; the function limits."""
    at = s.locs.diag
    spi_vm: dict[int, Function] = {}
    for f in functions:
        if not f.spi:
            continue
        other = spi_vm.setdefault(f.spi, f)
        if other.vm != f.vm:
            errors.append(at(f.path, f"PCI function {f.addr} of VM '{f.vm}' raises INTx SPI {f.spi}, as does "
                                     f"{other.addr} of VM '{other.vm}' ({other.path}): a shared INTx line cannot "
                                     "be passed through to two VMs; use another slot"))
    # behind a conventional bridge every function's DMA carries one alias:
    # the SMMU cannot tell them apart, so they must be one VM's
    alias_vm: dict[int, Function] = {}
    for f in functions:
        if f.alias_of is None:
            continue
        other = alias_vm.setdefault(f.stream_id, f)
        if other.vm != f.vm:
            br = f.alias_of
            errors.append(at(f.path, f"PCI function {f.addr} of VM '{f.vm}' and {other.addr} of VM '{other.vm}' "
                                     f"({other.path}) are behind the conventional bridge {br.qemu} {br.addr} "
                                     f"({br.path}): their DMA and MSIs carry one requester ID ({f.stream_id:#06x}), "
                                     "so one VM's stage 2 would translate both and the ITS take both as one "
                                     "device; give the functions behind that bridge to one VM"))
    if len(functions) > MAX_FUNCS:
        errors.append(at("vms", f"{len(functions)} PCI functions; the hypervisor enumerates at most {MAX_FUNCS}"))
    for vm in s.vms:
        n = sum(1 for f in functions if f.vm == vm.name)
        if n > MAX_FUNCS_PER_VM:
            errors.append(at(join(vm.path, "pci"), f"{n} PCI functions; a VM takes at most {MAX_FUNCS_PER_VM}"))


def _windows(s: SystemSpec, pci: PlatformPci, functions: list[Function]) -> dict[str, Range]:
    """Each VM with functions: an equal, naturally aligned slice of the 32-bit window."""
    users = [vm.name for vm in s.vms if any(f.vm == vm.name for f in functions)]
    windows: dict[str, Range] = {}
    if users:
        slice_ = MAX_WINDOW
        while slice_ > PAGE and (len(users) * slice_ > pci.mmio32.end - _align_up(pci.mmio32.base, slice_)):
            slice_ //= 2
        base = _align_up(pci.mmio32.base, slice_)
        for i, name in enumerate(users):
            windows[name] = Range(base + i * slice_, slice_)
    return windows


def _align_up(value: int, align: int) -> int:
    return (value + align - 1) // align * align


def confined(s: SystemSpec) -> bool:
    """Whether the VMs' PCI functions translate through their stage 2 (an
    SMMU in front of the root complex, driven for this config)."""
    return dma.enabled(s) and dma.pcie_smmu(s.platform) is not None


def device_name(f: Function) -> str:
    """How messages and the DMA stream table name a function: ``edu@00:01.0``."""
    return f"{f.qemu or f'{f.vendor:04x}:{f.device:04x}'}@{f.addr}"


def streams(s: SystemSpec) -> list[dma.DmaStream]:
    """The PCI hook of the DMA stream table (bulkhead/config/dma.py): one
    stream per requester ID the SMMU sees (bus << 8 | devfn: the function's
    own, or the alias of the conventional bridge it is behind), on the SMMU
    the root complex is behind."""
    unit = dma.pcie_smmu(s.platform)
    if unit is None:
        return []
    groups: dict[int, list[Function]] = {}
    for f in plan(s).functions:
        groups.setdefault(f.stream_id, []).append(f)
    out = []
    for sid, funcs in groups.items():
        funcs = [f for f in funcs if f.vm == funcs[0].vm]  # two VMs on one alias: plan's error
        first = funcs[0]
        # several functions behind one conventional bridge are one stream,
        # named after the bridge; stop-vm if any of them asks for it
        name = device_name(first) if len(funcs) == 1 or first.alias_of is None else \
            f"{first.alias_of.qemu}@{first.alias_of.addr}"
        policy = "stop-vm" if any(_on_fault(s, f) == "stop-vm" for f in funcs) else _on_fault(s, first)
        out.append(dma.DmaStream(unit.name, sid, first.vm, name, policy, first.path))
    return out


def _on_fault(s: SystemSpec, f: Function) -> str:
    """The function's ``on_dma_fault`` (its ``pci:`` entry's), else the default."""
    vm = s.vm(f.vm)
    entry = next((e for e in vm.pci if e.path == f.path), None) if vm is not None else None
    return entry.on_dma_fault if entry is not None and entry.on_dma_fault else dma.policy_of(s, f.vm, device_name(f))


dma.register_stream_source(streams)


def check(s: SystemSpec) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """(errors, warnings): the plan's errors; PCI functions are bus masters,
    so a VM owning one needs an SMMU in front of the root complex or
    ``dma_isolation: none``."""
    pl = plan(s)
    errors = list(pl.errors)
    warnings: list[Diagnostic] = []
    p = s.platform
    for vm in s.vms:
        funcs = pl.of(vm.name)
        hidden = [f for f in funcs if p.pci is not None and f.bdf >> 8 != p.pci.bus_first]
        if vm.type == "linux" and hidden:
            # the VM's ECAM shows its functions, never the bridge: Linux scans
            # the root bus and the buses bridges lead to, so it would not
            # find them
            errors.append(s.locs.diag(hidden[0].path, f"PCI function {hidden[0].addr} is behind a bridge, which "
                                                      f"the ECAM of VM '{vm.name}' does not show: Linux would not find "
                                                      "it; give a Linux VM functions on the root bus"))
        if not funcs or confined(s):
            continue
        names = ", ".join(f"'{f.label}'" for f in funcs)
        if s.dma_isolation == "none":
            warnings.append(s.locs.diag("dma_isolation", f"VM '{vm.name}' drives PCI function(s) {names} without an "
                                                         "SMMU: it can read and write all physical memory"))
        else:
            errors.append(s.locs.diag(funcs[0].path, f"PCI function {funcs[0].label} is a bus master and platform "
                                                     f"'{p.name}' has no SMMU support: VM '{vm.name}' could read "
                                                     "and write all physical memory through it; state "
                                                     "'dma_isolation: none' in the config to accept this"))
    return errors, warnings


def ipa_items(s: SystemSpec, vm: VmSpec) -> list[tuple[str, Range, str]]:
    """What a VM with PCI functions has in its IPA space: its ECAM and its
    BAR window (IPA = PA)."""
    pci = s.platform.pci
    if pci is None or not vm.pci:
        return []
    pl = plan(s)
    items = [("the PCI ECAM", pci.vm_ecam_range, join(vm.path, "pci"))]
    if vm.name in pl.windows:
        items.append(("the PCI BAR window", pl.windows[vm.name], join(vm.path, "pci")))
    return items


def pt_extra(nfuncs: int) -> int:
    """Stage-2 table pages the BARs of nfuncs functions may need beyond the
    VM's other mappings: an L2 page, one L3 page per BAR."""
    return 1 + 6 * nfuncs if nfuncs else 0


def report(system: Resolved) -> str:
    """``check``'s PCI section ('' without PCI functions)."""
    s = system.spec
    pl = plan(s)
    if not pl.functions or s.platform.pci is None:
        return ""
    pci = s.platform.pci
    lines = [f"PCI (ECAM {pci.ecam.base:#x}, buses {pci.bus_first}-{pci.bus_last}; each VM sees its functions "
             f"in an ECAM at IPA {pci.vm_ecam:#x}, BARs at IPA = PA):"]
    for vm, funcs in ((v, pl.of(v.name)) for v in s.vms if pl.of(v.name)):
        own = f"; its own physical LPIs {vm.lpi_base}-{vm.lpi_base + 255} (interrupts: direct)" \
            if vm.interrupts == "direct" and s.platform.gic.its else ""
        lines.append(f"  {vm.name}: BAR window {pl.windows[vm.name]}{own}")
        for f in funcs:
            intx = f"INTx SPI {f.spi}" if f.spi else "no INTx"
            msi, by = f"; MSI/MSI-X to {f.doorbell:#x}" if f.doorbell else "", f.alias_of
            alias = f"; DMA{' and MSI' * bool(msi)} as {f.stream_id:#06x} (alias of {by.qemu} {by.addr})" if by else ""
            lines.append(f"    {f.addr}  {f.vendor:04x}:{f.device:04x}  {f.qemu or '-':<15} {intx}{msi}{alias}")
    for br in pl.bridges:
        lines.append(f"  bridge {br.addr} {br.qemu}: bus {br.sec:02x}")
    return "\n".join(lines)


def document(system: Resolved) -> dict[str, Any]:
    """``check --json``'s ``pci``: per VM, its window and functions."""
    s = system.spec
    pl = plan(s)
    out: dict[str, Any] = {}
    for vm in s.vms:
        funcs = pl.of(vm.name)
        if not funcs:
            continue
        w = pl.windows[vm.name]
        out[vm.name] = {
            "window": {"base": w.base, "size": w.size},
            "functions": [{"addr": f.addr, "vendor": f"{f.vendor:04x}", "device": f"{f.device:04x}",
                           "qemu": f.qemu, "intx_spi": f.spi or None, "stream_id": f.stream_id,
                           "msi_doorbell": f.doorbell or None} for f in funcs],
        }
    return out


def qemu_args(system: Resolved, out_dir: str | None) -> list[str]:
    """The QEMU devices the config's ``{qemu: MODEL}`` entries add, at their
    planned addresses (``out_dir``: where the nvme drive images are)."""
    s = system.spec
    pci = s.platform.pci
    if pci is None:
        return []
    pl = plan(s)
    funcs = pl.functions
    by_sec = {b.sec: b for b in pl.bridges}

    def where(bdf: int) -> str:
        bus = pci.qemu_bus if bdf >> 8 == pci.bus_first else by_sec[bdf >> 8].qemu_id
        return f"bus={bus},addr={(bdf >> 3) & 31:#x}.{bdf & 7}"

    # no default NIC: QEMU virt would put a virtio-net-pci at the first free slot
    out: list[str] = ["-nic", "none"] if funcs or pl.bridges else []
    # parents first (plan lists them depth first); pci-bridge: a chassis
    # number of its own, no hot-plug controller (slot 0 usable)
    for i, br in enumerate(pl.bridges):
        extra = f",chassis_nr={i + 1},shpc=off" if br.qemu == "pci-bridge" else ""
        out += ["-device", f"{br.qemu},id={br.qemu_id}{extra},{where(br.bdf)}"]
    for f in funcs:
        if f.qemu is None:
            continue
        addr = where(f.bdf)
        tag = f"bhpci{f.bdf:x}"
        if f.qemu == "edu":
            # 64-bit DMA addresses (edu's default mask keeps 28 bits)
            out += ["-device", f"edu,{addr},dma_mask=0xffffffffffffffff"]
        elif f.qemu == "virtio-net-pci":
            # iommu_platform=on: without it QEMU's virtio devices do their DMA
            # on system memory directly, past the SMMU (hw/virtio/virtio-bus.c
            # gives them the IOMMU's address space only with
            # VIRTIO_F_IOMMU_PLATFORM), so the device would see physical
            # addresses: any PA for an attacker, wrong memory for every VM
            out += ["-netdev", f"user,id={tag}",
                    "-device", f"virtio-net-pci,netdev={tag},disable-legacy=on,iommu_platform=on,{addr}"]
        elif f.qemu == "nvme":
            image = f"{out_dir or '.'}/{nvme_image(f)}"
            out += ["-drive", f"file={image},if=none,format=raw,id={tag}",
                    "-device", f"nvme,drive={tag},serial={tag},{addr}"]
    return out


def nvme_image(f: Function) -> str:
    """The drive image of an nvme function, in the build directory."""
    return f"nvme-{f.vm}-{f.bdf:04x}.img"


# --- parse, config.c, features -------------------------------------------


def parse_platform(r: Reader, top: Keys, p: Platform) -> Platform:
    return dataclasses.replace(p, pci=_parse_host(r, top["pci"])) if "pci" in top else p


def parse_system(r: Reader, top: Keys, s: SystemSpec) -> SystemSpec:
    return dataclasses.replace(s, pci_bridges=parse_bridges(r, top["pci_bridges"])) if "pci_bridges" in top else s


def parse_vm(r: Reader, m: Keys, vm: VmSpec, p: Platform) -> VmSpec:
    return dataclasses.replace(vm, pci=_parse_entries(r, m["pci"], join(vm.path, "pci"))) if "pci" in m else vm


def emit_platform(out: CSource, p: Platform) -> list[Field]:
    """The PCIe host bridge (struct cfg_pci) that struct cfg_platform points to."""
    h = p.pci
    if h is None:
        return []
    out.line("static const struct cfg_pci pci_host = {")
    for key, value in (("ecam_base", hexa(h.ecam.base)), ("bus_first", str(h.bus_first)), ("bus_last", str(h.bus_last)),
                       ("vm_ecam_ipa", hexa(h.vm_ecam)), ("intx", "{ " + ", ".join(str(i) for i in h.intx) + " }")):
        out.line(f"\t.{key} = {value},")
    out.line("};")
    out.line()
    return [("pci", "&pci_host")]


def emit_vm(out: CSource, system: SystemView, vm: VmView) -> list[Field]:
    """A VM's functions (struct cfg_pci_func) and BAR window (struct cfg_vm)."""
    if not vm.pci or vm.pci_window is None:
        return []
    out.array(f"static const struct cfg_pci_func vm{vm.index}_pci", struct_rows(
        [("name", cstr(f.label)), ("bdf", hexa(f.bdf)), ("vendor", hexa(f.vendor)),
         ("device", hexa(f.device)), ("intx", str(f.spi)), ("msi_doorbell", hexa(f.doorbell)),
         ("devid", hexa(f.stream_id))] for f in vm.pci))
    return [("npci", str(len(vm.pci))), ("pci", f"vm{vm.index}_pci"), ("lpi_base", str(vm.spec.lpi_base)),
            ("pci_win_base", hexa(vm.pci_window.base)), ("pci_win_size", hexa(vm.pci_window.size))]


def needs(system: SystemView) -> list[Need]:
    """PCI for a VM owning functions; ITS too where the platform has one (docs/interrupts.md)."""
    its = system.platform.gic.its != 0
    return [n for vm in system.vms if vm.pci
            for n in [Need("PCI", f"vm {vm.name}", "owns PCI functions (pci)")]
            + ([Need("ITS", f"vm {vm.name}", "owns PCI functions on a platform with gic.its")] if its else [])]


# the host bridge's table (struct cfg_pci) is the platform table's (bulkhead.generate.gen_c)
MECHANISM = Mechanism(
    name="pci", rank=30, docs="docs/pci.md",
    features={"PCI": ("core/pci/*.c", "lib/pcienum.c"), "ITS": ("drivers/gic/gicv3_its.c", "core/vgic/vits*.c")},
    platform_keys=("pci",), system_keys=("pci_bridges",), vm_keys=("pci",), region_keys=(), device_keys=(),
    parse_platform=parse_platform, parse_system=parse_system, parse_vm=parse_vm, parse_region=None, check_device=None,
    parse_device=None, check_platform=None, check=check, ipa_items=ipa_items, reserved_ram=None, guest_params=None,
    limits=(), emit_platform=emit_platform, emit_tables=None, emit_vm=emit_vm, emit_system=None, needs=needs,
)
