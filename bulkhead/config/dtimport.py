# SPDX-License-Identifier: Apache-2.0
"""``bulkhead platform import``: a platform file from a board's Linux device tree.

What a device tree says is read and written with a comment naming the node
(and property) it came from: the CPUs (MPIDR from ``reg``, core type from
``compatible``), the memory banks, ``/memreserve/`` and the
``/reserved-memory`` regions marked ``no-map`` (``reserved:``), the GIC
(version, frames, maintenance interrupt), the timer PPIs, the PMU interrupts
and their affinity, the console UART (``stdout-path``) and its driver, the
SMMUs a Bulkhead driver drives (``smmus:``), the memory-mapped devices (every
register window) with their interrupts, whether they master the bus
(``iommus``, or a bus-master class of node name) and their stream IDs, and
the last-level cache geometry (with one per cluster, the one with the most
colors). Devices that cannot share one MMIO window outside RAM without
overlapping are left out with the reason. What a device tree cannot say (the
hypervisor's and the staging area's place, the DRAM bank bits, the PMU event
models, QoS regulators, a QEMU model), or says in a way Bulkhead cannot use
yet (a console without a driver, no GIC, other timer PPIs, a PMU interrupt
that is not the GIC's), is a ``TODO <key>`` comment: Linux carries on
without them and so does the import. Filling the TODO keys, and nothing
else, gives a platform ``bulkhead check`` accepts
(tests/test_platform_import_all.py). :mod:`bulkhead.config.dtrender` writes
the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bulkhead import drivers
from bulkhead.config.dma import MAX_SMMUS
from bulkhead.config.dtb import DeviceTree, DtError, DtNode, Irq
from bulkhead.config.model import GIC_FRAME, GICD_SPAN, MAX_CPUS, MAX_RAM_BANKS, PAGE
from bulkhead.drivers import gic as gic_drivers
from bulkhead.drivers import iommu

# the compatibles the drivers say they drive (bulkhead/drivers/<kind>/)
GIC_V2 = tuple(c for d in gic_drivers.all_drivers() if d.arch == 2 for c in d.dt_compatible)
GIC_V3 = tuple(c for d in gic_drivers.all_drivers() if d.arch == 3 for c in d.dt_compatible)
UART_DRIVER = {c: d.name for d in drivers.of_kind("uart") for c in d.dt_compatible}
# The generic 16550 (registers every 1 << reg-shift bytes, reg-io-width wide): its driver,
# ns16550, takes uart.reg_shift and uart.reg_io_width. A SoC's own 8250 variant (DesignWare,
# MediaTek, Tegra...) names its compatible first and is matched by that one.
NS16550 = ("ns16550a", "ns16550", "ns16450", "ns8250")
SMMU_TYPE = {c: d.compatible[0] for d in iommu.all_drivers() for c in d.dt_compatible}
NEAR = 0x20000000  # devices further than this from the console's and the GIC's span are left out
# Node names (devicetree spec "generic names") of classes that master the bus.
BUS_MASTERS = ("ethernet", "mmc", "dma-controller", "usb", "sata", "pcie", "gpu", "video-codec", "npu",
               "nvme", "spi-nand", "dma", "vop", "isp", "rga", "jpeg-decoder", "video-decoder", "video-encoder")
SKIP = ("cpus", "memory", "reserved-memory", "chosen", "aliases", "timer", "psci", "firmware", "__symbols__",
        "opp-table", "thermal-zones")
CPU_PMU = re.compile(r"arm,(armv8-pmuv3|cortex-[ax]\d+-pmu|neoverse-[a-z0-9]+-pmu)\Z")
SHORT = {"dma-controller": "dma", "memory-controller": "memctrl", "interrupt-controller": "intc",
         "ethernet": "eth", "serial": "serial", "watchdog": "wdt", "video-codec": "vcodec",
         "power-controller": "power", "clock-controller": "cru", "system-controller": "syscon"}
GUEST_VGICD, GUEST_VGICC = 0x08000000, 0x08010000  # where VMs see a GICv2 (QEMU virt's places)
GUEST_CONSOLE = (0x09000000, 33)  # the virtual PL011 VMs see


def hex_value(v: int) -> str:
    return f"0x{v:X}" if v > 9 else str(v)


@dataclass
class Imported:
    """What the device tree said, typed; ``render`` writes the platform file."""

    source: str
    model: str
    name: str
    cpus: list[tuple[int, str, str]] = field(default_factory=list)  # (mpidr, core type, node)
    cpu_notes: list[str] = field(default_factory=list)
    cpu_compat: dict[str, str] = field(default_factory=dict)  # node -> its first compatible
    ram: list[tuple[int, int, str]] = field(default_factory=list)
    reserved: list[tuple[int, int, str]] = field(default_factory=list)
    gic: dict[str, int] = field(default_factory=dict)
    gic_notes: list[str] = field(default_factory=list)
    timer: dict[str, int] = field(default_factory=dict)
    timer_node: str = ""
    uart: dict[str, Any] = field(default_factory=dict)
    uart_notes: list[str] = field(default_factory=list)
    uart_todo: str = ""  # why uart: is a TODO (no driver, no GIC interrupt)
    pmu_irq: int | list[int] | None = None
    pmu_notes: list[str] = field(default_factory=list)
    devices: list[dict[str, Any]] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)  # devices (windows) left out, and why
    smmus: list[dict[str, Any]] = field(default_factory=list)  # smmus: entries Bulkhead drives
    smmu_notes: list[str] = field(default_factory=list)  # the others
    window: tuple[int, int] | None = None  # a suggested MMIO window (base, size)
    llc: dict[str, int] | None = None
    llc_note: str = ""
    notes: list[str] = field(default_factory=list)

    def document(self) -> dict[str, Any]:
        """The DT-derived values as the platform file's keys (``--json``)."""
        cpus: list[Any] = ([m for m, _, _ in self.cpus] if len({t for _, t, _ in self.cpus}) <= 1
                           else [{"mpidr": m, "type": t} for m, t, _ in self.cpus])
        ram: Any = [{"base": b, "size": s} for b, s, _ in self.ram]
        doc: dict[str, Any] = {"name": self.name, "cpus": cpus}
        if ram:
            doc["ram"] = ram[0] if len(ram) == 1 else ram
        if self.reserved:
            doc["reserved"] = [{"base": b, "size": s} for b, s, _ in self.reserved]
        if self.gic:
            doc["gic"] = dict(self.gic)
        if self.timer:
            doc["timer"] = dict(self.timer)
        if self.uart and not self.uart_todo:
            doc["uart"] = dict(self.uart)
        doc["console"] = {"ipa": GUEST_CONSOLE[0], "irq": GUEST_CONSOLE[1]}
        if self.smmus:
            doc["smmus"] = [dict(u) for u in self.smmus]
        doc["devices"] = [{k: v for k, v in d.items() if not k.startswith("_")} for d in self.devices]
        if self.pmu_irq is not None:
            doc["bandwidth"] = {"pmu_irq": self.pmu_irq}
        if self.llc is not None:
            doc["coloring"] = {"llc": dict(self.llc)}
        return doc


def _irq_number(irq: Irq, gic: DtNode | None) -> int | None:
    """The GIC INTID of a specifier (None: not the GIC's, or not an SPI or a PPI)."""
    if gic is None or irq.controller is not gic or len(irq.cells) < 2:
        return None
    kind, num = irq.cells[0], irq.cells[1]
    if kind == 0 and num < 988:
        return 32 + num
    if kind == 1 and num < 16:
        return 16 + num
    return None  # an extended SPI/PPI (GICv3.1) or a bad type


def flow(d: dict[str, Any]) -> str:
    parts = []
    for k, v in d.items():
        if isinstance(v, bool):
            s = "true" if v else "false"
        elif isinstance(v, int):
            s = hex_value(v) if k not in ("version", "spis", "line", "ways", "event", "gerror", "reg_shift",
                                     "reg_io_width") and not k.endswith("irq") else str(v)
        elif isinstance(v, list):
            s = "[" + ", ".join((hex_value(x) if k == "stream_ids" else str(x)) if isinstance(x, int) else f'"{x}"'
                                for x in v) + "]"
        elif isinstance(v, dict):
            s = flow(v)
        else:
            s = f'"{v}"' if re.search(r"[,:#{}\[\]]|^\s|\s$", str(v)) else str(v)
        parts.append(f"{k}: {s}")
    return "{" + ", ".join(parts) + "}"


def import_dtb(tree: DeviceTree, name: str | None = None) -> Imported:
    root = tree.root
    model = root.string("model") or (root.compatible[0] if root.compatible else "unknown board")
    stem = Path(tree.name).stem
    plat_name = name or re.sub(r"[^a-z0-9_-]", "-", stem.lower())[:32].strip("-") or "board"
    out = Imported(source=Path(tree.name).name, model=model, name=plat_name)
    _cpus(tree, out)
    _memory(tree, out)
    gic = _gic(tree, out)
    _timer(tree, out, gic)
    _pmu(tree, out, gic)
    console = _uart(tree, out, gic)
    _smmus(tree, out, gic)
    _devices(tree, out, gic, console)
    _llc(tree, out)
    return out


def _cpus(tree: DeviceTree, out: Imported) -> None:
    cpus = tree.root.child("cpus")
    if cpus is None:
        raise DtError("/cpus", "no /cpus node")
    ac, _ = tree.addr_cells(cpus)
    for n in cpus.children:
        if n.string("device_type") != "cpu":
            continue
        reg = n.cells("reg")
        if len(reg) != ac or not reg:
            raise DtError(f"{n.path}:reg", f"expected {ac} cell(s) of MPIDR affinity, got {len(reg)}")
        mpidr = 0
        for c in reg:
            mpidr = (mpidr << 32) | c
        compat = n.compatible[0] if n.compatible else ""
        kind = re.sub(r"[^a-z0-9_-]", "-", compat.split(",", 1)[-1].lower())[:32] if compat else ""
        if not kind:
            raise DtError(n.path, "a CPU without 'compatible': its core type is unknown")
        out.cpus.append((mpidr, kind, n.path))
        out.cpu_compat[n.path] = compat
    if not out.cpus:
        raise DtError(cpus.path, "no CPU nodes (device_type = \"cpu\")")
    if len(out.cpus) > MAX_CPUS:
        left = out.cpus[MAX_CPUS:]
        out.cpus = out.cpus[:MAX_CPUS]
        out.cpu_notes.append(f"Bulkhead runs on at most {MAX_CPUS} CPUs: the first {MAX_CPUS} are listed; "
                             f"{', '.join(p.rsplit('/', 1)[-1] for _, _, p in left)} are left to the firmware "
                             "(list others instead if you prefer)")


def _memory(tree: DeviceTree, out: Imported) -> None:
    for n in tree.root.children:
        if n.string("device_type") == "memory" and n.enabled and n.has("reg"):
            regs = tree.reg(n)
            for k, (base, size) in enumerate(regs):
                if size:
                    out.ram.append((base, size, f"{n.path} reg" + (f"[{k}]" if len(regs) > 1 else "")))
    out.ram = _merge(sorted(out.ram), out.notes, "memory", touching=False)
    if len(out.ram) > MAX_RAM_BANKS:
        left = out.ram[MAX_RAM_BANKS:]
        out.ram = out.ram[:MAX_RAM_BANKS]
        out.notes.append(f"Bulkhead takes at most {MAX_RAM_BANKS} RAM banks: left out " +
                         ", ".join(f"0x{b:x}+0x{s:x} [{p}]" for b, s, p in left))
    regions = [(b, s, "/memreserve/ (the blob's memory reservation block)") for b, s in tree.memreserve]
    rm = tree.root.child("reserved-memory")
    for n in rm.children if rm is not None else []:
        if not n.has("no-map") or not n.has("reg") or not n.enabled:
            if n.has("reg"):
                out.notes.append(f"{n.path}: reserved without no-map (the OS's, e.g. a CMA pool): not excluded")
            continue
        regions += [(base, size, f"{n.path} reg, no-map") for base, size in tree.reg(n) if size]
    out.reserved = _merge(sorted(regions), out.notes, "reserved", touching=True)


def _merge(items: list[tuple[int, int, str]], notes: list[str], what: str,
           touching: bool) -> list[tuple[int, int, str]]:
    """Sorted (base, size, source) with overlapping (or touching) ones merged."""
    merged: list[tuple[int, int, str]] = []
    for base, size, path in items:
        if merged and (base < merged[-1][0] + merged[-1][1] or touching and base == merged[-1][0] + merged[-1][1]):
            mb, ms, mp = merged[-1]
            end = max(mb + ms, base + size)
            merged[-1] = (mb, end - mb, f"{mp} + {path} (overlapping: merged)")
            if what == "memory":
                notes.append(f"{path} overlaps {mp}: merged into one bank")
        else:
            merged.append((base, size, path))
    return merged


def _gic(tree: DeviceTree, out: Imported) -> DtNode | None:
    gics = [n for n in tree.root.walk() if n.has("interrupt-controller")
            and any(c in GIC_V2 + GIC_V3 for c in n.compatible)]
    if not gics:
        ctrl = tree.interrupt_parent(tree.root) if tree.root.has("interrupt-parent") else None
        what = f"{ctrl.path} ({', '.join(ctrl.compatible)})" if ctrl else "none"
        out.gic_notes = [f"TODO gic: no GIC in the device tree (its interrupt controller: {what}). Bulkhead "
                         "drives a GICv2 with the virtualization extensions or a GICv3 (a gic driver, "
                         "docs/boards/porting.md \"Drivers\"); the interrupts below are only the GIC's"]
        return None
    g = gics[0]
    regs = tree.reg(g)
    maint = next((i for i in tree.irqs(g) if len(i.cells) > 1), None)
    maint_irq = 16 + maint.cells[1] if maint is not None and maint.cells[0] == 1 and maint.cells[1] < 16 else None
    if any(c in GIC_V3 for c in g.compatible):
        if len(regs) < 2:
            raise DtError(f"{g.path}:reg", "a GICv3 needs its distributor and redistributor frames")
        stride = g.u32("redistributor-stride", 0) if g.has("redistributor-stride") else 0
        out.gic = {"version": 3, "gicd": regs[0][0], "gicr": regs[1][0], "gicr_stride": stride or 0x20000}
        out.gic_notes = [f"{g.path} compatible {g.compatible[0]}: GICv3",
                         f"reg[0] GICD 0x{regs[0][0]:x}, reg[1] GICR 0x{regs[1][0]:x} (0x{regs[1][1]:x} bytes)",
                         "gicr_stride: " + (f"redistributor-stride 0x{stride:x}" if stride else
                                            "0x20000, the GICv3 frame pair (RD_base + SGI_base; no "
                                            "redistributor-stride property)")]
        if any("arm,gic-v3-its" in c.compatible for c in g.children):
            out.gic_notes.append("the ITS (msi-controller children) is not used by Bulkhead")
    else:
        if len(regs) < 4:  # Linux needs them only for KVM: carry on
            out.gic_notes = [f"TODO gic: {g.path} ({g.compatible[0]}) is a GICv2 with {len(regs)} frame(s) in the DT, "
                             "no GICH and GICV (reg[2], reg[3]): Bulkhead needs the virtualization extensions; "
                             "the SoC TRM says whether the GIC has them and where. The DT's frames: "
                             + ", ".join(f"0x{b:x}+0x{sz:x}" for b, sz in regs)]
            return g
        stride = 0x10000 if regs[1][1] >= 0x20000 else 0x1000
        out.gic = {"version": 2, "gicd": regs[0][0], "gicc": regs[1][0], "gich": regs[2][0],
                   "gicv": regs[3][0], "page_stride": stride, "vgicd": GUEST_VGICD, "vgicc": GUEST_VGICC}
        out.gic_notes = [f"{g.path} compatible {g.compatible[0]}: GICv2",
                         f"reg: GICD 0x{regs[0][0]:x}, GICC 0x{regs[1][0]:x}, GICH 0x{regs[2][0]:x}, "
                         f"GICV 0x{regs[3][0]:x}",
                         "page_stride: " + ("GICC spans 0x%x bytes: each 4 KiB page aliased over 64 KiB"
                                            % regs[1][1] if stride == 0x10000 else "GICC is 8 KiB: pages adjacent"),
                         "vgicd/vgicc: where VMs see their GICv2 (Bulkhead's guest platform, QEMU virt's places)"]
    if maint_irq is None:
        out.gic_notes.append("TODO gic.maintenance_irq: the GIC node gives no maintenance PPI ('interrupts'); "
                             "the SoC TRM's interrupt map has it (PPI 9 = INTID 25 on most SoCs)")
    else:
        assert maint is not None
        out.gic["maintenance_irq"] = maint_irq
        out.gic_notes.append(f"maintenance_irq: interrupts <1 {maint.cells[1]} ...> = PPI {maint.cells[1]}")
    return g


def _timer(tree: DeviceTree, out: Imported, gic: DtNode | None) -> None:
    t = next((n for n in tree.root.walk() if {"arm,armv8-timer", "arm,armv7-timer"} & set(n.compatible)), None)
    irqs = [_irq_number(i, gic) for i in tree.irqs(t)] if t is not None else []
    if t is None or len(irqs) < 4 or any(i is None or i >= 32 for i in irqs[:4]):
        out.timer_node = ("TODO timer: " + ("no arm,armv8-timer node" if t is None else
                          f"{t.path} does not give 4 GIC PPIs (secure, non-secure, virtual, hypervisor)") +
                          ": the SoC TRM's interrupt map has them (usually PPIs 13, 14, 11, 10)")
        return
    out.timer = {"hyp_irq": irqs[3] or 0, "virt_irq": irqs[2] or 0, "phys_irq": irqs[1] or 0,
                 "secure_irq": irqs[0] or 0}
    out.timer_node = t.path
    if (out.timer["virt_irq"], out.timer["phys_irq"]) != (27, 30):  # core/irq/irq.h: the SBSA numbers
        out.timer_node = (f"TODO timer: {t.path} gives the EL1 virtual and physical timers PPIs "
                          f"{out.timer['virt_irq'] - 16} and {out.timer['phys_irq'] - 16} (INTIDs "
                          f"{out.timer['virt_irq']}, {out.timer['phys_irq']}); Bulkhead routes them as the SBSA's "
                          f"PPIs 11 and 14 (INTIDs 27, 30), so this board needs the hypervisor to route others. "
                          f"The DT's values: {flow(out.timer)}")
        out.timer = {}


def _pmu(tree: DeviceTree, out: Imported, gic: DtNode | None) -> None:
    pmus = [n for n in tree.root.walk() if any(CPU_PMU.match(c) for c in n.compatible)
            and (n.has("interrupts") or n.has("interrupts-extended"))]
    if not pmus:
        out.pmu_notes = ["TODO: the device tree has no PMU node (compatible arm,*-pmu) with interrupts: "
                         "bandwidth regulation needs the PMU overflow interrupt; find it in the SoC's TRM "
                         "(interrupt map) and give bandwidth.pmu_irq"]
        return
    try:
        _pmu_irqs(tree, out, gic, pmus)
    except DtError as exc:  # Linux carries on without a PMU interrupt: so does the import
        out.pmu_irq = None
        out.pmu_notes.append(f"TODO: {exc.path}: {exc.message}: find the PMU overflow interrupt of each CPU in "
                             "the SoC's TRM (interrupt map) and give bandwidth.pmu_irq")


def _pmu_irqs(tree: DeviceTree, out: Imported, gic: DtNode | None, pmus: list[DtNode]) -> None:
    cpu_index = {path: i for i, (_, _, path) in enumerate(out.cpus)}
    ppis: set[int] = set()
    per_cpu: dict[int, int] = {}
    for n in pmus:
        irqs = tree.irqs(n)
        nums = [_irq_number(i, gic) for i in irqs]
        if any(x is None for x in nums):
            raise DtError(f"{n.path}:interrupts", "a PMU interrupt that is not a GIC SPI or PPI "
                                                  f"(its controller: {irqs[0].controller.path})")
        if all(x is not None and x < 32 for x in nums):
            for i, x in zip(irqs, nums, strict=True):
                assert x is not None
                ppis.add(x)
                part = i.cells[3] if len(i.cells) > 3 else 0
                who = "every CPU"
                if part:
                    pnode = tree.phandle(n, part, "interrupts")
                    cpus = [tree.phandle(pnode, ph, "affinity").path for ph in pnode.cells("affinity")]
                    who = ", ".join(p.rsplit("/", 1)[-1] for p in cpus) + f" (ppi-partitions {pnode.name})"
                out.pmu_notes.append(f"{n.path} ({n.compatible[0]}): PPI {x - 16} = INTID {x} on {who}")
            continue
        aff = n.cells("interrupt-affinity") if n.has("interrupt-affinity") else ()
        if aff and len(aff) != len(nums):
            raise DtError(f"{n.path}:interrupt-affinity", f"{len(nums)} SPIs need as many CPU phandles, "
                                                          f"got {len(aff)}")
        for k, x in enumerate(nums):
            assert x is not None
            cpu = tree.phandle(n, aff[k], "interrupt-affinity").path if aff else out.cpus[k][2]
            if cpu in cpu_index:
                per_cpu[cpu_index[cpu]] = x
        out.pmu_notes.append(f"{n.path} ({n.compatible[0]}): one SPI per CPU, interrupts + " + (
            "interrupt-affinity" if aff else "no interrupt-affinity: taken in CPU order, as Linux guesses"))
    if ppis and per_cpu:
        raise DtError(pmus[0].path, "PMU interrupts mix PPIs and SPIs")
    if ppis:
        if len(ppis) > 1:
            raise DtError(pmus[0].path, f"the PMUs use different PPIs {sorted(ppis)}: Bulkhead takes one")
        out.pmu_irq = ppis.pop()
        return
    if len(per_cpu) != len(out.cpus):
        raise DtError(pmus[0].path, f"PMU SPIs for {len(per_cpu)} of {len(out.cpus)} CPUs")
    out.pmu_irq = [per_cpu[i] for i in range(len(out.cpus))]


def _uart(tree: DeviceTree, out: Imported, gic: DtNode | None) -> DtNode | None:
    chosen = tree.root.child("chosen")
    sp = chosen.string("stdout-path") if chosen else None
    if sp is None:
        out.uart_todo = "no /chosen stdout-path: pick the console UART (base, irq, driver)"
        return None
    ref, _, opts = sp.partition(":")
    n = tree.resolve(ref)
    if n is None:
        raise DtError("/chosen:stdout-path", f"'{ref}' names no node (nor an alias)")
    out.uart_notes = [f"/chosen stdout-path \"{sp}\" -> {n.path} ({', '.join(n.compatible)})"]
    if opts:
        out.uart_notes.append(f"console settings {opts} (baud, parity, bits): set by the firmware, kept by "
                              "Bulkhead")
    driver = next((UART_DRIVER[c] for c in n.compatible if c in UART_DRIVER), None)
    if driver is None and any(c in NS16550 for c in n.compatible):
        driver = "ns16550"
    regs = tree.reg(n) if n.has("reg") else []
    irqs = [_irq_number(i, gic) for i in tree.irqs(n)]
    out.uart = {"base": regs[0][0] if regs else 0, "irq": irqs[0] if irqs and irqs[0] else 0,
                "driver": driver or "TODO"}
    if driver == "ns16550":
        width = n.u32("reg-io-width", 1) if n.has("reg-io-width") else 1
        shift = n.u32("reg-shift", 0) if n.has("reg-shift") else 0
        out.uart.update(reg_shift=shift, reg_io_width=width)
        out.uart_notes.append(f"reg-shift {shift}, reg-io-width {width}: registers every {1 << shift} bytes, "
                              f"accessed {width} byte(s) wide")
    if driver is None:
        out.uart_todo = (f"no Bulkhead UART driver for compatible {', '.join(n.compatible)}: write one "
                         "(docs/boards/porting.md \"Drivers\") and name it as uart.driver")
    elif not regs or not out.uart["irq"]:
        out.uart_todo = f"{n.path} has no " + ("reg" if not regs else "GIC SPI") + ": give the console's"
    return n


def _smmus(tree: DeviceTree, out: Imported, gic: DtNode | None) -> None:
    """``smmus:`` entries for the IOMMUs a Bulkhead driver drives (SMMU-500, SMMUv3), enabled ones first."""
    units = sorted((n for n in tree.root.walk() if n.has("#iommu-cells") and n.has("reg")),
                   key=lambda n: not n.enabled)
    for n in units:
        regs = tree.reg(n) if tree.mapped(n) else []
        kind = next((SMMU_TYPE[c] for c in n.compatible if c in SMMU_TYPE), None)
        what = f"{n.path} ({', '.join(n.compatible)})" + (f" at 0x{regs[0][0]:x}" if regs else "")
        irqs = [_irq_number(i, gic) for i in tree.irqs(n)] if kind else []
        if kind == "smmuv3":
            names = n.strings("interrupt-names")
            byname = dict(zip(names, irqs, strict=False))
            event, gerror = (byname.get("eventq") or byname.get("combined"), byname.get("gerror")
                             or byname.get("combined"))
        else:
            k = max(n.u32("#global-interrupts", 1) if n.has("#global-interrupts") else 1, 1)
            event, gerror = (irqs[0] if irqs else None), (irqs[min(1, k - 1)] if len(irqs) > min(1, k - 1) else None)
        why = ("no Bulkhead driver" if kind is None else "not memory-mapped" if not regs else
               "its interrupts are not GIC SPIs" if not (event and gerror and event >= 32 and gerror >= 32) else
               "disabled" if not n.enabled else f"Bulkhead drives at most {MAX_SMMUS}"
               if len(out.smmus) == MAX_SMMUS else "")
        if why:
            out.smmu_notes.append(f"{what}: not listed ({why})")
            continue
        assert kind is not None and event is not None and gerror is not None
        out.smmus.append({"name": "smmu" if not out.smmus else f"smmu{len(out.smmus)}", "type": kind,
                          "base": regs[0][0], "size": regs[0][1], "irqs": {"event": event, "gerror": gerror},
                          "enable": "with-streams", "sources": [f"{out.source} node {n.path}"], "_node": n})


def _windows(tree: DeviceTree, out: Imported, gic: DtNode | None, console: DtNode | None) -> list[tuple[Any, ...]]:
    """Every register window of every memory-mapped device: (base, size, node, k, irqs)."""
    iommus = {n.path for n in tree.root.walk() if n.has("#iommu-cells")}
    cand: list[DtNode] = []

    def visit(bus: DtNode) -> None:
        for n in bus.children:
            if (n.base_name in SKIP and "@" not in n.name or n.string("device_type") in ("memory", "cpu")
                    or n.base_name == "reserved-memory" or n is gic or n is console or n.path in iommus):
                continue
            if n.has("ranges") and not n.has("reg") or "simple-bus" in n.compatible:
                visit(n)
                continue
            if n.has("reg") and n.compatible and tree.mapped(n) and not n.has("interrupt-controller"):
                cand.append(n)

    visit(tree.root)
    rows = []
    for n in cand:
        try:
            regs = tree.reg(n)
            specs = tree.irqs(n)
        except DtError as exc:
            out.dropped.append(f"{n.path}: {exc.message}")
            continue
        irqs: list[int] = []
        for i in specs:
            x = _irq_number(i, gic)
            if x is not None and x >= 32 and x not in irqs:
                irqs.append(x)
        for k, (base, size) in enumerate(regs):
            if size:
                rows.append((base, size, n, k, irqs if k == 0 else []))
    return sorted(rows, key=lambda r: (not r[2].enabled, r[0]))


def _fixed(out: Imported) -> list[tuple[int, int, str]]:
    """What devices must not overlap: the console's page, the GIC frames, the SMMUs."""
    fixed = [(out.uart["base"], PAGE, "the console UART")] if out.uart.get("base") else []
    g = out.gic
    if g.get("version") == 3:
        fixed += [(g["gicd"], GICD_SPAN, "the GIC distributor"),
                  (g["gicr"], len(out.cpus) * g["gicr_stride"], "the GIC redistributors")]
    elif g:
        two = g["page_stride"] + GIC_FRAME
        fixed += [(g["gicd"], GICD_SPAN, "the GIC distributor"), (g["gicc"], two, "the GIC CPU interface"),
                  (g["gich"], GIC_FRAME, "the GIC virtual interface control"), (g["gicv"], two, "the GICV")]
    return fixed + [(u["base"], u["size"], f"SMMU {u['name']}") for u in out.smmus]


def _place(out: Imported, rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """The windows that fit: outside RAM, overlapping nothing kept before them,
    near the console's and the GIC's span; ``out.window`` covers them."""
    fixed = _fixed(out)
    lo = min((b for b, _, _ in fixed), default=min((r[0] for r in rows), default=0))
    hi = max((b + s for b, s, _ in fixed), default=lo)
    inside = [(b, s, w) for b, s, w in fixed if any(b < rb + rs and rb < b + s for rb, rs, _ in out.ram)]
    if inside:  # a placeholder memory node (the boot loader writes the real one)
        out.notes.append(f"the memory node{'s' if len(out.ram) > 1 else ''} "
                         + ", ".join(f"0x{b:x}+0x{s:x} [{p}]" for b, s, p in out.ram)
                         + f" take{'' if len(out.ram) > 1 else 's'} in {inside[0][2]} (0x{inside[0][0]:x}): "
                         "not the DRAM (the boot loader fills it in)")
        out.ram = []
    taken = [(b, s, w) for b, s, w in fixed]
    kept = []
    for row in sorted(rows, key=lambda r: (not r[2].enabled, abs(r[0] - lo))):
        base, size, n, k = row[:4]
        what = f"{n.path} reg[{k}] 0x{base:x}+0x{size:x}"
        ram = next(((b, s) for b, s, _ in out.ram if base < b + s and b < base + size), None)
        clash = next((w for b, s, w in taken if base < b + s and b < base + size), None)
        new_lo, new_hi = min(lo, base), max(hi, base + size)
        if ram is None and any(new_lo < b + s and b < new_hi for b, s, _ in out.ram):
            ram = next((b, s) for b, s, _ in out.ram if new_lo < b + s and b < new_hi)
        if ram is not None:
            out.dropped.append(f"{what}: the window would take in RAM 0x{ram[0]:x}+0x{ram[1]:x}")
        elif clash is not None:
            out.dropped.append(f"{what}: overlaps {clash}")
        elif base > hi + NEAR or base + size < lo - NEAR:
            out.dropped.append(f"{what}: far from the console and the GIC (more than 0x{NEAR:x} away): "
                               "add it with a wider mmio window if a VM needs it")
        else:
            lo, hi = new_lo, new_hi
            taken.append((base, size, f"{n.path} reg[{k}]"))
            kept.append(row)
    base = lo & ~(0x200000 - 1)
    end = -(-hi // 0x200000) * 0x200000
    if any(base < b + s and b < end for b, s, _ in out.ram):
        base, end = lo & ~(PAGE - 1), -(-hi // PAGE) * PAGE
    out.window = (base, end - base) if end > base else None
    return sorted(kept, key=lambda r: (r[0], r[3]))


def _devices(tree: DeviceTree, out: Imported, gic: DtNode | None, console: DtNode | None) -> None:
    alias_of = {path: a for a, path in tree.aliases.items()}
    taken: set[str] = set()
    counters: dict[str, int] = {}
    smmu_of = {u["_node"].path: u for u in out.smmus}
    owner: dict[tuple[str, int], str] = {}
    claimed = {out.uart.get("irq"): "the console UART"} | {
        i: f"SMMU {u['name']}" for u in out.smmus for i in u["irqs"].values()}
    claimed |= {i: "the PMU" for i in (out.pmu_irq if isinstance(out.pmu_irq, list) else [])}
    first: dict[str, str] = {}
    for base, size, n, k, irqs in _place(out, _windows(tree, out, gic, console)):
        alias = alias_of.get(n.path)
        name = alias if alias and k == 0 and re.fullmatch(r"[a-z][a-z0-9_-]{0,15}", alias) and alias not in taken \
            else ""
        if k and n.path in first:
            name = f"{first[n.path][:12]}-r{k}" if f"{first[n.path][:12]}-r{k}" not in taken else ""
        if not name:
            stem = SHORT.get(n.base_name) or re.sub(r"[^a-z0-9_-]", "-", n.base_name.lower())[:12].strip("-")
            stem = stem if re.match(r"[a-z]", stem or "") else "dev"
            while True:
                c = counters.get(stem, 0)
                counters[stem] = c + 1
                if f"{stem}{c}" not in taken and f"{stem}{c}" not in alias_of.values():
                    name = f"{stem}{c}"
                    break
        taken.add(name)
        first.setdefault(n.path, name)
        notes = [n.path + (f" reg[{k}]" if k else "") + ("" if n.enabled else " (disabled)")]
        shared = [i for i in irqs if i in claimed]
        if shared:
            notes.append(f"interrupt {', '.join(map(str, shared))} left out: also {claimed[shared[0]]}'s")
        d: dict[str, Any] = {"name": name, "base": base, "size": size}
        if kept := [i for i in irqs if i not in claimed]:
            d["irqs"] = kept
        d["compatible"] = list(n.compatible)
        if "arm,primecell" in n.compatible:
            d["amba"] = True
        why = []
        if n.has("iommus") and k == 0:
            why.append(_streams(tree, n, d, smmu_of, owner, notes, len(out.smmus) > 1))
        if n.base_name in BUS_MASTERS:
            why.append(f"node name '{n.base_name}': a bus-master class")
        if why:
            d["dma"] = True
        d["_note"] = "; ".join(notes) + ("; dma: " + "; ".join(why) if why else "")
        out.devices.append(d)
    for u in out.smmus:
        u.pop("_node", None)


def _streams(tree: DeviceTree, n: DtNode, d: dict[str, Any], smmu_of: dict[str, dict[str, Any]],
             owner: dict[tuple[str, int], str], notes: list[str], name_smmu: bool) -> str:
    """The device's stream IDs on a listed SMMU (``iommus``), each given to one device."""
    c = n.cells("iommus")
    ids: list[int] = []
    unit: dict[str, Any] | None = None
    i = 0
    while i < len(c):
        ctrl = tree.phandle(n, c[i], "iommus")
        k = ctrl.u32("#iommu-cells", 0) if ctrl.has("#iommu-cells") else 0
        u = smmu_of.get(ctrl.path)
        if u is not None and k and (unit is None or unit is u):
            unit = u
            sid = c[i + 1]
            bits = iommu.of_type(u["type"]).sid_bits
            if sid >> bits:
                notes.append(f"stream 0x{sid:x} left out: wider than the {bits}-bit IDs of {u['type']}")
            elif (u["name"], sid) in owner:
                notes.append(f"stream 0x{sid:x} left out: also {owner[(u['name'], sid)]}'s")
            elif sid not in ids:
                ids.append(sid)
                owner[(u["name"], sid)] = d["name"]
        i += 1 + k
    first = tree.phandle(n, c[0], "iommus").path if c else "?"
    if unit is not None and ids:
        d["stream_ids"] = ids
        if name_smmu:
            d["smmu"] = unit["name"]
    return f"iommus -> {first}" + (f" stream {', '.join(f'0x{x:x}' for x in ids)}" if ids else
                                   " (an IOMMU Bulkhead does not drive)" if unit is None else "")


def _llc(tree: DeviceTree, out: Imported) -> None:
    """The last-level cache of each cluster (following next-level-cache from the
    CPUs); with one L2 per cluster, the one with the most colors (largest way)."""
    tops: dict[str, tuple[DtNode, list[str]]] = {}
    for _, _, path in out.cpus:
        node = tree.node(path)
        top = None
        seen = 0
        while node is not None and node.has("next-level-cache") and seen < 8:
            node = tree.by_phandle.get(node.u32("next-level-cache"))
            top = node if node is not None else top
            seen += 1
        if top is not None:
            tops.setdefault(top.path, (top, []))[1].append(path.rsplit("/", 1)[-1])
    caches = [t for t, _ in tops.values()] or [n for n in tree.root.walk() if n.has("cache-level")]
    if not caches:
        return
    geo = {n.path: _geometry(n) for n in caches}

    def rank(n: DtNode) -> tuple[int, int, int]:
        g = geo[n.path]
        return (1, g["size"] // g["ways"], g["size"]) if g else (0, n.u32("cache-level", 0), 0)

    top = max(caches, key=rank)
    g = geo[top.path]
    level = top.u32("cache-level", 0) if top.has("cache-level") else 0
    if g is None:
        out.llc_note = f"{top.path} (cache-level {level}) gives no geometry (cache-size/cache-line-size/cache-sets)"
        return
    out.llc = g
    out.llc_note = (f"{top.path}: cache-level {level}, cache-size 0x{g['size']:x}, cache-line-size {g['line']}, "
                    f"cache-sets {g['size'] // (g['line'] * g['ways'])} -> {g['ways']} ways")
    if len(tops) > 1:
        cpus = tops[top.path][1] if top.path in tops else []
        others = [f"{p} ({', '.join(c)}" + (f": {(geo[p] or {}).get('size', 0) // max((geo[p] or {}).get('ways', 1), 1) // PAGE} colors)"
                  if geo[p] else ": no geometry)") for p, (_, c) in tops.items() if p != top.path]
        out.llc_note += (f"; one last-level cache per cluster: this one, of {', '.join(cpus)}, has the most "
                         f"colors ({g['size'] // g['ways'] // PAGE}); the others: {'; '.join(others)}. Colors "
                         "that differ only in bits above a smaller cache's share its sets")


def _geometry(n: DtNode) -> dict[str, int] | None:
    size = n.u32("cache-size", 0) if n.has("cache-size") else 0
    line = n.u32("cache-line-size", 0) if n.has("cache-line-size") else 0
    sets = n.u32("cache-sets", 0) if n.has("cache-sets") else 0
    if size and line and sets and size % (line * sets) == 0:
        return {"size": size, "ways": size // (line * sets), "line": line}
    return None
