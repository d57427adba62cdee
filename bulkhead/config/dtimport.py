# SPDX-License-Identifier: Apache-2.0
"""``bulkhead platform import``: a platform file from a board's Linux device tree.

What a device tree says is read and written with a comment naming the node
(and property) it came from: the CPUs (MPIDR from ``reg``, core type from
``compatible``), the memory banks and the ``/reserved-memory`` regions marked
``no-map`` (kept out of every VM: ``reserved:``), the GIC (version, frames,
maintenance interrupt), the timer PPIs, the PMU interrupts and their
affinity, the console UART (``stdout-path``) and the memory-mapped devices
with their interrupts, whether they master the bus (``iommus``, or a
bus-master class of node name) and their IOMMU, the SMMUs, and the last-level
cache geometry when the cache nodes give it. What a device tree cannot say
(the hypervisor's and the staging area's place, the DRAM bank bits, the PMU
event models, QoS regulators, a QEMU model) is left as ``TODO`` comments
saying where to find it. The result is a starting point, not a checked
platform: ``bulkhead check`` on a config using it names what is missing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bulkhead import drivers
from bulkhead.config.dtb import DeviceTree, DtError, DtNode, Irq
from bulkhead.drivers import gic as gic_drivers

# the compatibles the drivers say they drive (bulkhead/drivers/<kind>/)
GIC_V2 = tuple(c for d in gic_drivers.all_drivers() if d.arch == 2 for c in d.dt_compatible)
GIC_V3 = tuple(c for d in gic_drivers.all_drivers() if d.arch == 3 for c in d.dt_compatible)
UART_DRIVER = {c: d.name for d in drivers.of_kind("uart") for c in d.dt_compatible}
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


def _hex(v: int) -> str:
    return f"0x{v:X}" if v > 9 else str(v)


@dataclass
class Line:
    text: str
    note: str = ""


@dataclass
class Imported:
    """What the device tree said, typed; ``render`` writes the platform file."""

    source: str
    model: str
    name: str
    cpus: list[tuple[int, str, str]] = field(default_factory=list)  # (mpidr, core type, node)
    ram: list[tuple[int, int, str]] = field(default_factory=list)
    reserved: list[tuple[int, int, str]] = field(default_factory=list)
    gic: dict[str, int] = field(default_factory=dict)
    gic_notes: list[str] = field(default_factory=list)
    timer: dict[str, int] = field(default_factory=dict)
    timer_node: str = ""
    uart: dict[str, Any] = field(default_factory=dict)
    uart_notes: list[str] = field(default_factory=list)
    pmu_irq: int | list[int] | None = None
    pmu_notes: list[str] = field(default_factory=list)
    devices: list[dict[str, Any]] = field(default_factory=list)
    smmus: list[str] = field(default_factory=list)
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
        doc.update(gic=dict(self.gic), timer=dict(self.timer), uart=dict(self.uart),
                   console={"ipa": GUEST_CONSOLE[0], "irq": GUEST_CONSOLE[1]},
                   devices=[{k: v for k, v in d.items() if not k.startswith("_")} for d in self.devices])
        if self.pmu_irq is not None:
            doc["bandwidth"] = {"pmu_irq": self.pmu_irq}
        if self.llc is not None:
            doc["coloring"] = {"llc": dict(self.llc)}
        return doc


def _irq_number(irq: Irq, gic: DtNode | None, at: str) -> int | None:
    """The GIC INTID of a specifier (None: not the GIC's)."""
    if gic is None or irq.controller is not gic:
        return None
    kind, num = irq.cells[0], irq.cells[1]
    if kind == 0:
        return 32 + num
    if kind == 1:
        return 16 + num
    raise DtError(at, f"GIC interrupt type {kind} is neither SPI (0) nor PPI (1)")


def _flow(d: dict[str, Any]) -> str:
    parts = []
    for k, v in d.items():
        if isinstance(v, bool):
            s = "true" if v else "false"
        elif isinstance(v, int):
            s = _hex(v) if k not in ("version", "spis", "line", "ways") and not k.endswith("irq") else str(v)
        elif isinstance(v, list):
            s = "[" + ", ".join(str(x) if isinstance(x, int) else f'"{x}"' for x in v) + "]"
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
        kind = compat.split(",", 1)[-1] if compat else ""
        if not kind:
            raise DtError(n.path, "a CPU without 'compatible': its core type is unknown")
        out.cpus.append((mpidr, kind, n.path))
    if not out.cpus:
        raise DtError(cpus.path, "no CPU nodes (device_type = \"cpu\")")


def _memory(tree: DeviceTree, out: Imported) -> None:
    for n in tree.root.children:
        if n.string("device_type") == "memory" and n.enabled:
            regs = tree.reg(n)
            for k, (base, size) in enumerate(regs):
                if size:
                    out.ram.append((base, size, f"{n.path} reg" + (f"[{k}]" if len(regs) > 1 else "")))
    out.ram.sort()
    for i, (b, s, p) in enumerate(out.ram[1:], 1):
        pb, ps, pp = out.ram[i - 1]
        if b < pb + ps:
            raise DtError(p.split()[0], f"memory 0x{b:x}-0x{b + s - 1:x} overlaps {pp.split()[0]} "
                                        f"(0x{pb:x}-0x{pb + ps - 1:x})")
    rm = tree.root.child("reserved-memory")
    if rm is None:
        return
    regions: list[tuple[int, int, str]] = []
    for n in rm.children:
        if not n.has("no-map") or not n.has("reg") or not n.enabled:
            if n.has("reg"):
                out.notes.append(f"{n.path}: reserved without no-map (the OS's, e.g. a CMA pool): not excluded")
            continue
        for base, size in tree.reg(n):
            regions.append((base, size, n.path))
    regions.sort()
    merged: list[tuple[int, int, str]] = []
    for base, size, path in regions:
        if merged and base <= merged[-1][0] + merged[-1][1]:
            mb, ms, mp = merged[-1]
            end = max(mb + ms, base + size)
            merged[-1] = (mb, end - mb, f"{mp} + {path} (overlapping: merged)")
        else:
            merged.append((base, size, path))
    out.reserved = merged


def _gic(tree: DeviceTree, out: Imported) -> DtNode | None:
    gics = [n for n in tree.root.walk() if n.has("interrupt-controller")
            and any(c in GIC_V2 + GIC_V3 for c in n.compatible)]
    if not gics:
        raise DtError("/", "no GIC node (compatible arm,gic-400, arm,cortex-a15-gic or arm,gic-v3)")
    g = gics[0]
    regs = tree.reg(g)
    irqs = tree.irqs(g)
    if not irqs:
        raise DtError(g.path, "no maintenance interrupt ('interrupts'): the GIC has no virtualization "
                              "extensions, Bulkhead needs them")
    maint = irqs[0]
    maint_irq = 16 + maint.cells[1] if maint.cells[0] == 1 else None
    if maint_irq is None:
        raise DtError(f"{g.path}:interrupts", "the maintenance interrupt is not a PPI")
    if any(c in GIC_V3 for c in g.compatible):
        if len(regs) < 2:
            raise DtError(f"{g.path}:reg", "a GICv3 needs its distributor and redistributor frames")
        stride = g.u32("redistributor-stride", 0) if g.has("redistributor-stride") else 0
        out.gic = {"version": 3, "gicd": regs[0][0], "gicr": regs[1][0],
                   "gicr_stride": stride or 0x20000, "maintenance_irq": maint_irq}
        out.gic_notes = [f"{g.path} compatible {g.compatible[0]}: GICv3",
                         f"reg[0] GICD 0x{regs[0][0]:x}, reg[1] GICR 0x{regs[1][0]:x} (0x{regs[1][1]:x} bytes)",
                         "gicr_stride: " + (f"redistributor-stride 0x{stride:x}" if stride else
                                            "0x20000, the GICv3 frame pair (RD_base + SGI_base; no "
                                            "redistributor-stride property)"),
                         f"maintenance_irq: interrupts <1 {maint.cells[1]} ...> = PPI {maint.cells[1]}"]
        if any("arm,gic-v3-its" in c.compatible for c in g.children):
            out.gic_notes.append("the ITS (msi-controller children) is not used by Bulkhead")
    else:
        if len(regs) < 4:
            raise DtError(f"{g.path}:reg", f"a GICv2 with {len(regs)} frame(s): Bulkhead needs the "
                                           "virtualization extensions (GICH and GICV frames, reg[2] and reg[3])")
        stride = 0x10000 if regs[1][1] >= 0x20000 else 0x1000
        out.gic = {"version": 2, "gicd": regs[0][0], "gicc": regs[1][0], "gich": regs[2][0],
                   "gicv": regs[3][0], "page_stride": stride, "vgicd": GUEST_VGICD, "vgicc": GUEST_VGICC,
                   "maintenance_irq": maint_irq}
        out.gic_notes = [f"{g.path} compatible {g.compatible[0]}: GICv2",
                         f"reg: GICD 0x{regs[0][0]:x}, GICC 0x{regs[1][0]:x}, GICH 0x{regs[2][0]:x}, "
                         f"GICV 0x{regs[3][0]:x}",
                         "page_stride: " + ("GICC spans 0x%x bytes: each 4 KiB page aliased over 64 KiB"
                                            % regs[1][1] if stride == 0x10000 else "GICC is 8 KiB: pages adjacent"),
                         f"maintenance_irq: interrupts <1 {maint.cells[1]} ...> = PPI {maint.cells[1]}",
                         "vgicd/vgicc: where VMs see their GICv2 (Bulkhead's guest platform, QEMU virt's places)"]
    return g


def _timer(tree: DeviceTree, out: Imported, gic: DtNode | None) -> None:
    t = next((n for n in tree.root.walk() if "arm,armv8-timer" in n.compatible), None)
    if t is None:
        raise DtError("/timer", "no arm,armv8-timer node")
    irqs = [_irq_number(i, gic, t.path) for i in tree.irqs(t)]
    if len(irqs) < 4 or any(i is None or i >= 32 for i in irqs[:4]):
        raise DtError(f"{t.path}:interrupts", "expected 4 PPIs (secure, non-secure, virtual, hypervisor)")
    out.timer = {"hyp_irq": irqs[3] or 0, "virt_irq": irqs[2] or 0, "phys_irq": irqs[1] or 0,
                 "secure_irq": irqs[0] or 0}
    out.timer_node = t.path


def _pmu(tree: DeviceTree, out: Imported, gic: DtNode | None) -> None:
    pmus = [n for n in tree.root.walk() if any(CPU_PMU.match(c) for c in n.compatible)
            and tree.irqs(n)]
    if not pmus:
        out.pmu_notes = ["TODO: the device tree has no PMU node (compatible arm,*-pmu): bandwidth regulation "
                         "needs the PMU overflow interrupt; find it in the SoC's TRM (interrupt map) and give "
                         "bandwidth.pmu_irq"]
        return
    cpu_index = {path: i for i, (_, _, path) in enumerate(out.cpus)}
    ppis: set[int] = set()
    per_cpu: dict[int, int] = {}
    for n in pmus:
        irqs = tree.irqs(n)
        nums = [_irq_number(i, gic, n.path) for i in irqs]
        if any(x is None for x in nums):
            raise DtError(f"{n.path}:interrupts", "a PMU interrupt that is not the GIC's")
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
        if len(nums) > 1 and len(aff) != len(nums):
            raise DtError(f"{n.path}:interrupt-affinity", f"{len(nums)} SPIs need as many CPU phandles, "
                                                          f"got {len(aff)}")
        for k, x in enumerate(nums):
            assert x is not None
            cpu = tree.phandle(n, aff[k], "interrupt-affinity").path if aff else out.cpus[k][2]
            if cpu not in cpu_index:
                raise DtError(f"{n.path}:interrupt-affinity", f"{cpu} is not a CPU of /cpus")
            per_cpu[cpu_index[cpu]] = x
        out.pmu_notes.append(f"{n.path} ({n.compatible[0]}): one SPI per CPU, interrupts + "
                             "interrupt-affinity")
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
        out.uart_notes = ["TODO: no /chosen stdout-path: pick the console UART (base, irq, driver)"]
        return None
    ref, _, opts = sp.partition(":")
    n = tree.resolve(ref)
    if n is None:
        raise DtError("/chosen:stdout-path", f"'{ref}' names no node (nor an alias)")
    driver = next((UART_DRIVER[c] for c in n.compatible if c in UART_DRIVER), None)
    if driver is None:
        raise DtError(n.path, f"no Bulkhead UART driver for compatible {', '.join(n.compatible)} "
                              f"(drivers: {', '.join(sorted(set(UART_DRIVER.values())))})")
    irqs = [_irq_number(i, gic, n.path) for i in tree.irqs(n)]
    if not irqs or irqs[0] is None:
        raise DtError(f"{n.path}:interrupts", "the console UART has no GIC interrupt")
    base = tree.reg(n)[0][0]
    out.uart = {"base": base, "irq": irqs[0], "driver": driver}
    out.uart_notes = [f"/chosen stdout-path \"{sp}\" -> {n.path} ({', '.join(n.compatible)})"]
    if opts:
        out.uart_notes.append(f"console settings {opts} (baud, parity, bits): set by the firmware, kept by "
                              "Bulkhead")
    width = n.u32("reg-io-width", 1) if n.has("reg-io-width") else 1
    shift = n.u32("reg-shift", 0) if n.has("reg-shift") else 0
    if n.has("reg-io-width") or n.has("reg-shift"):
        out.uart_notes.append(f"reg-io-width {width}, reg-shift {shift}: registers every {1 << shift} bytes")
    return n


def _devices(tree: DeviceTree, out: Imported, gic: DtNode | None, console: DtNode | None) -> None:
    alias_of = {path: a for a, path in tree.aliases.items()}
    iommus = {n.path for n in tree.root.walk() if n.has("#iommu-cells")}
    cand: list[DtNode] = []

    def visit(bus: DtNode) -> None:
        for n in bus.children:
            if (n.base_name in SKIP and "@" not in n.name or n.string("device_type") in ("memory", "cpu")
                    or n.base_name == "reserved-memory" or n is gic or n is console):
                continue
            if n.has("ranges") and not n.has("reg") or "simple-bus" in n.compatible:
                visit(n)
                continue
            if n.path in iommus and n.has("reg"):
                regs = tree.reg(n)
                out.smmus.append(f"{n.path} ({', '.join(n.compatible)}) at 0x{regs[0][0]:x}, #iommu-cells "
                                 f"{n.u32('#iommu-cells')}" + ("" if n.enabled else ", status disabled"))
            elif n.has("reg") and n.compatible and tree.mapped(n) and not n.has("interrupt-controller"):
                cand.append(n)

    visit(tree.root)
    taken: set[str] = set()
    counters: dict[str, int] = {}
    rows = []
    for n in cand:
        try:
            regs = tree.reg(n)
        except DtError:
            continue
        if not regs or not regs[0][1]:
            continue
        base, size = regs[0]
        irqs: list[int] = []
        for i in tree.irqs(n) if (n.has("interrupts") or n.has("interrupts-extended")) else []:
            x = _irq_number(i, gic, n.path) if i.controller is gic else None
            if x is not None and x not in irqs:
                irqs.append(x)
        rows.append((base, size, n, irqs))
    rows.sort(key=lambda r: r[0])
    for base, size, n, irqs in rows:
        alias = alias_of.get(n.path)
        name = alias if alias and re.fullmatch(r"[a-z][a-z0-9_-]{0,15}", alias) and alias not in taken else ""
        if not name:
            stem = SHORT.get(n.base_name) or re.sub(r"[^a-z0-9_-]", "-", n.base_name.lower())[:12].strip("-")
            stem = stem or "dev"
            while True:
                k = counters.get(stem, 0)
                counters[stem] = k + 1
                if f"{stem}{k}" not in taken and f"{stem}{k}" not in alias_of.values():
                    name = f"{stem}{k}"
                    break
        taken.add(name)
        d: dict[str, Any] = {"name": name, "base": base, "size": size}
        if irqs:
            d["irqs"] = irqs
        d["compatible"] = list(n.compatible)
        if "arm,primecell" in n.compatible:
            d["amba"] = True
        why = []
        if n.has("iommus"):
            c = n.cells("iommus")
            ctrl = tree.phandle(n, c[0], "iommus")
            k = ctrl.u32("#iommu-cells", 0)
            ids = [f"0x{x:x}" for x in c[1:1 + k]] if k else []
            why.append(f"iommus -> {ctrl.path}" + (f" stream {', '.join(ids)}" if ids else ""))
        if n.base_name in BUS_MASTERS:
            why.append(f"node name '{n.base_name}': a bus-master class")
        if why:
            d["dma"] = True
        d["_note"] = n.path + ("" if n.enabled else " (status disabled)") + (
            "; dma: " + "; ".join(why) if why else "")
        out.devices.append(d)


def _llc(tree: DeviceTree, out: Imported) -> None:
    caches = [n for n in tree.root.walk() if n.has("cache-level")]
    if not caches:
        return
    top = max(caches, key=lambda n: n.u32("cache-level"))
    size = top.u32("cache-size", 0) if top.has("cache-size") else 0
    line = top.u32("cache-line-size", 0) if top.has("cache-line-size") else 0
    sets = top.u32("cache-sets", 0) if top.has("cache-sets") else 0
    if size and line and sets and size % (line * sets) == 0:
        out.llc = {"size": size, "ways": size // (line * sets), "line": line}
        out.llc_note = (f"{top.path}: cache-level {top.u32('cache-level')}, cache-size 0x{size:x}, "
                        f"cache-line-size {line}, cache-sets {sets} -> {size // (line * sets)} ways")
    else:
        out.llc_note = (f"{top.path} (cache-level {top.u32('cache-level')}) gives no geometry "
                        "(cache-size/cache-line-size/cache-sets)")


# --- rendering ---------------------------------------------------------------------------------


def _size(v: int) -> str:
    for unit, shift in (("G", 30), ("M", 20)):
        if v >= 1 << shift and v % (1 << shift) == 0:
            return f"{v >> shift}{unit}"
    return _hex(v)


def render(imp: Imported) -> str:
    o: list[str] = []
    add = o.append
    add("# SPDX-License-Identifier: Apache-2.0")
    add(f"# {imp.model}: imported by `bulkhead platform import` from {imp.source}.")
    add("# Every value below cites the device-tree node it came from ([dt <node>]). Lines")
    add("# marked TODO are what a device tree cannot say: complete them by hand and cite")
    add("# their sources (docs/config.md lists every key; docs/boards/porting.md the steps).")
    add(f"name: {imp.name}")
    add("# TODO board: the hypervisor/platform/<board> directory with the board's code")
    add("# (omit it for a board that needs none).")
    add("# TODO qemu: only if QEMU models this board (binary, machine, cpu, memory).")
    types = sorted({t for _, t, _ in imp.cpus})
    if len(types) <= 1:
        add(f"cpus: [{', '.join(f'0x{m:x}' for m, _, _ in imp.cpus)}]"
            f"  # MPIDR affinity [dt {imp.cpus[0][2].rsplit('/', 1)[0]}/cpu@* reg], "
            f"{types[0] if types else '?'}")
    else:
        add("# CPUs of different core types (a DynamIQ cluster): each carries its type")
        add("cpus:")
        for m, t, p in imp.cpus:
            add(f"  - {{mpidr: 0x{m:03x}, type: {t}}}  # [dt {p} reg, compatible arm,{t}]")
    if imp.ram:
        if len(imp.ram) == 1:
            b, s, p = imp.ram[0]
            add(f"ram: {{base: 0x{b:X}, size: {_size(s)}}}  # [dt {p}]")
        else:
            add("ram:")
            for b, s, p in imp.ram:
                add(f"  - {{base: 0x{b:X}, size: {_size(s)}}}  # [dt {p}]")
    else:
        add("# TODO ram: the device tree has no memory node (the boot loader fills it in): take")
        add("# the DRAM banks from the boot loader's board code or its `bdinfo`, less what the")
        add("# firmware keeps (BL31, OP-TEE).")
    if imp.reserved:
        add("# /reserved-memory regions marked no-map: no VM memory, shared memory or colored")
        add("# span is placed over them, and the hypervisor and staging areas avoid them")
        add("reserved:")
        for b, s, p in imp.reserved:
            add(f"  - {{base: 0x{b:X}, size: {_hex(s)}}}  # [dt {p} reg, no-map]")
    for note in imp.notes:
        add(f"# note: {note}")
    add("# TODO hypervisor: {base, size} in the first RAM bank, clear of where the boot")
    add("# loader puts itself and the DTB (30M is typical).")
    add("# TODO staging: {base, size} in the first RAM bank: where the payload's images are")
    add("# loaded before the hypervisor copies them into VM memory.")
    add("# TODO mmio: {base, size}, the device window the hypervisor maps" + (
        f" (the devices below span 0x{min(d['base'] for d in imp.devices):X}-"
        f"0x{max(d['base'] + d['size'] for d in imp.devices) - 1:X})." if imp.devices else "."))
    for note in imp.gic_notes:
        add(f"# [dt {note}]")
    add("# TODO gic.spis: the number of SPIs (GICD_TYPER.ITLinesNumber; the SoC TRM's interrupt map).")
    add(f"gic: {_flow(imp.gic)}")
    add(f"timer: {_flow(imp.timer)}  # [dt {imp.timer_node} interrupts: secure, phys, virt, hyp PPIs]")
    for note in imp.uart_notes:
        add(f"# [dt {note}]")
    if imp.uart:
        add(f"uart: {_flow(imp.uart)}")
    add(f"console: {{ipa: 0x{GUEST_CONSOLE[0]:08X}, irq: {GUEST_CONSOLE[1]}}}  # the virtual PL011 VMs see "
        "(Bulkhead's guest platform)")
    if imp.smmus:
        add("# SMMUs / IOMMUs [dt]: Bulkhead does not program them yet (docs/qos.md \"DMA isolation\"):")
        for smmu in imp.smmus:
            add(f"#   {smmu}")
    add("# Memory-mapped devices [dt <node> reg, interrupts (SPI + 32)]; dma: true marks bus")
    add("# masters (the reason is in the comment: iommus, or the node's class). Trim the list")
    add("# to the devices VMs get.")
    add("devices:")
    for d in imp.devices:
        note = d["_note"]
        add(f"  - {_flow({k: v for k, v in d.items() if not k.startswith('_')})}  # [dt {note}]")
    add("# TODO bandwidth: the PMU event model of each core type (events, bytes_per_event,")
    add("# model: the core's TRM, PMU events chapter), sustainable_mbps (measure: a stride")
    add("# sweep, docs/bandwidth.md), counter_hz (CNTFRQ_EL0).")
    for note in imp.pmu_notes:
        add(f"# [dt {note}]" if not note.startswith("TODO") else f"# {note}")
    if imp.pmu_irq is not None:
        irq = imp.pmu_irq if isinstance(imp.pmu_irq, int) else "[" + ", ".join(map(str, imp.pmu_irq)) + "]"
        add("bandwidth:")
        add(f"  pmu_irq: {irq}")
    if imp.llc is not None:
        add(f"# [dt {imp.llc_note}]")
        add("# TODO coloring.l1_bits and bank_bits: the L1D index bits above bit 11 (core TRM) and")
        add("# the DRAM controller's bank address bits (SoC TRM); docs/coloring.md.")
        add("coloring:")
        add(f"  llc: {{size: {_size(imp.llc['size'])}, ways: {imp.llc['ways']}, line: {imp.llc['line']}}}")
    else:
        if imp.llc_note:
            add(f"# [dt {imp.llc_note}]")
        add("# TODO coloring: the last-level cache's size, ways and line (the core or DSU TRM)")
        add("# and the DRAM bank bits (SoC TRM); docs/coloring.md.")
    add("# TODO qos_regulators: the interconnect's QoS register blocks (SoC TRM), if any.")
    return "\n".join(o) + "\n"
