# SPDX-License-Identifier: Apache-2.0
"""Generates ``config.c``: the static tables of hypervisor/core/config/config.h."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from bulkhead.config import bandwidth, coloring, dma, dsu, interrupts, qos
from bulkhead.config.color import Colors
from bulkhead.config.model import MAX_CPUS, MAX_RAM_BANKS, GicSpec, Platform
from bulkhead.drivers import gic, iommu, uart
from bulkhead.generate import features, image
from bulkhead.layout.placement import StagedImage, System, Vm, placed_pa

# Constants the toolchain shares with the hypervisor: (C macro, the header
# defining it, the toolchain's value, where that value lives). config.c
# asserts each, so that a drift between the two fails the build.
SHARED: tuple[tuple[str, str, int, str], ...] = (
    ("CFG_MAX_CPUS", "core/config/config.h", MAX_CPUS, "bulkhead.config.model.MAX_CPUS"),
    ("CFG_MAX_RAM", "core/config/config.h", MAX_RAM_BANKS, "bulkhead.config.model.MAX_RAM_BANKS"),
    ("QOS400_MAX", "isolation/qos400.h", qos.MAX_PROGRAMMED, "bulkhead.config.qos.MAX_PROGRAMMED"),
    ("BW_MAX_PERIOD_US", "isolation/bw_budget.h", bandwidth.MAX_PERIOD_US,
     "bulkhead.config.bandwidth.MAX_PERIOD_US"),
    ("BW_MAX_BUDGET", "isolation/bw_budget.h", bandwidth.MAX_BUDGET_EVENTS,
     "bulkhead.config.bandwidth.MAX_BUDGET_EVENTS"),
    ("PAYLOAD_VERSION", "core/boot/payload.h", image.VERSION, "bulkhead.generate.image.VERSION"),
    ("PAYLOAD_NAME_LEN", "core/boot/payload.h", image.NAME_LEN, "bulkhead.generate.image.NAME_LEN"),
    ("IOMMU_MAX_STREAMS", "drivers/iommu.h", dma.MAX_STREAMS, "bulkhead.config.dma.MAX_STREAMS"),
    ("IOMMU_MAX_UNITS", "drivers/iommu.h", dma.MAX_SMMUS, "bulkhead.config.dma.MAX_SMMUS"),
)


def _hex(value: int) -> str:
    return f"0x{value:x}"


def _cstr(value: str) -> str:
    out = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{out}"'


def _struct_rows(rows: Iterable[Sequence[tuple[str, str]]]) -> list[str]:
    return ["\t{ " + ", ".join(f".{k} = {v}" for k, v in row) + " },\n" for row in rows]


class _Writer:
    def __init__(self) -> None:
        self.parts: list[str] = []

    def line(self, text: str = "") -> None:
        self.parts.append(text + "\n")

    def array(self, decl: str, rows: list[str]) -> None:
        self.parts.append(f"{decl}[] = {{\n")
        self.parts.extend(rows)
        self.parts.append("};\n")

    def text(self) -> str:
        return "".join(self.parts)


def generate(system: System, staged: Sequence[StagedImage], source_name: str) -> str:
    """The C source; ``source_name`` names the config in the header comment."""
    w = _Writer()
    _preamble(w, system, source_name)
    _platform_table(w, system.platform)
    colors = _color_tables(w, system)
    l3 = dsu.plan(system.spec)
    _vm_table(w, system, staged, colors, l3)
    if system.shmems:
        w.line()
        w.array("static const struct cfg_shmem shmems", _struct_rows(
            [("name", _cstr(sh.name)), ("pa", _hex(sh.pa)), ("size", _hex(sh.size))]
            + ([("color", colors[sh.colors])] if sh.colors is not None else [])
            for sh in system.shmems
        ))
    bw_system = _bw_system(w, system)
    nqos = _qos_table(w, system)
    iommu = _iommu_tables(w, system)
    w.line()
    w.line("const struct cfg_system cfg_system = {")
    w.line("\t.platform = &platform,")
    w.line(f"\t.nvms = {len(system.vms)},")
    w.line("\t.vms = vms,")
    w.line(f"\t.nshmem = {len(system.shmems)},")
    w.line(f"\t.shmems = {'shmems' if system.shmems else 'NULL'},")
    w.line(f"\t.console_input_vm = {system.console_input},")
    w.line(f"\t.config_hash = 0x{system.config_hash:016x}ULL,")
    if bw_system:
        w.line("\t.bw = &bw_system,")
    hyp = coloring.hypervisor_selection(system.spec)
    if hyp is not None:
        llc, bank = coloring.bitmaps(system.platform.coloring, [hyp])
        w.line(f"\t.hyp_color = {colors[hyp]},")
        w.line(f"\t.hyp_llc_colors = {_hex(llc)},")
        w.line(f"\t.hyp_bank_colors = {_hex(bank)},")
        w.line(f"\t.hyp_color_pa = {_hex(system.hyp_color_pa)},")
    if l3 is not None and system.platform.dsu is not None:
        w.line(f"\t.dsu_groups = {system.platform.dsu.groups},")
        w.line(f"\t.dsu_ways = {system.platform.dsu.l3_ways},")
    if nqos:
        w.line(f"\t.nqos = {nqos},")
        w.line("\t.qos = qos_regulators,")
    if iommu:
        w.line("\t.iommu = { " + iommu + " },")
    if system.pool is not None:
        w.line(f"\t.pool_color = {colors[system.pool.colors]},")
        w.line(f"\t.pool_pa = {_hex(system.pool.start)},")
        w.line(f"\t.pool_size = {_hex(system.pool.pages * 4096)},")
        w.line(f"\t.pool_span_end = {_hex(system.pool.end)},")
    w.line("};")
    return w.text()




def _preamble(w: _Writer, system: System, source_name: str) -> None:
    """The header comment, includes, the shared limits' and the features' checks."""
    p = system.platform
    w.line("/* SPDX-License-Identifier: Apache-2.0 */")
    w.line("/*")
    w.line(f" * Generated by bulkhead (bulkhead/gen_c.py) from {source_name}")
    w.line(f" * for platform {p.name}. Do not edit: change the config and rebuild.")
    w.line(" */")
    for header in dict.fromkeys(h for _, h, _, _ in SHARED):
        w.line(f'#include "{header}"')
    w.line()
    w.line("/* the limits the toolchain checked this config against are the hypervisor's */")
    for macro, _, limit, where in SHARED:
        w.line(f'_Static_assert({macro} == {limit}, "{macro}: {where} is {limit}");')
    w.line()
    w.line("/* what this config needs of the build (features.h): a build without it stops here */")
    w.line('#include "lib/features.h"')
    for line in features.checks(system):
        w.line(line)
    w.line()
    w.line("#ifndef NULL")
    w.line("#define NULL ((void *)0)")
    w.line("#endif")
    w.line()


def _platform_table(w: _Writer, p: Platform) -> None:
    """``platform`` (struct cfg_platform) and its PCIe host bridge."""
    mpidr = ", ".join(_hex(m) for m in p.mpidr)
    fields = [
        ("name", _cstr(p.name)),
        ("ncpus", str(p.ncpus)),
        ("mpidr", f"{{ {mpidr} }}"),
        ("ram_base", _hex(p.ram.base)),
        ("ram_size", _hex(p.ram.size)),
        *([("nram", str(len(p.banks))),
           ("ram", "{ " + ", ".join(f"{{ {_hex(b.base)}, {_hex(b.size)} }}" for b in p.banks) + " }")]
          if len(p.banks) > 1 else []),
        ("hyp_base", _hex(p.hypervisor.base)),
        ("hyp_size", _hex(p.hypervisor.size)),
        ("uart", f"{{ .ops = &{uart.of_name(p.uart.driver).ops}, .base = {_hex(p.uart.base)}, "
                 f".reg_shift = {p.uart.reg_shift}, .reg_io_width = {p.uart.reg_io_width} }}"),
        ("uart_irq", str(p.uart.irq)),
        ("gic", "{ " + ", ".join(f".{k} = {v}" for k, v in _gic_dev(p.gic)) + " }"),
    ]
    if p.gic.version == 2:
        fields += [
            ("gicv_base", _hex(p.gic.gicv)),
            ("vgicd_ipa", _hex(p.gic.vgicd)),
            ("vgicc_ipa", _hex(p.gic.vgicc)),
        ]
    fields += [
        ("gic_maint_irq", str(p.gic.maintenance_irq)),
        ("timer_hyp_irq", str(p.timer.hyp_irq)),
        ("timer_virt_irq", str(p.timer.virt_irq)),
        ("pmu_irq", str(p.pmu_irq or 0)),
        *([("pmu_spi", f"{{ {', '.join(str(i) for i in p.bandwidth.pmu_spis)} }}")]
          if p.bandwidth is not None and p.bandwidth.pmu_spis else []),
        ("mmio_base", _hex(p.mmio.base)),
        ("mmio_size", _hex(p.mmio.size)),
    ]
    if p.coloring is not None:
        fields += [
            ("llc_color_mask", _hex(p.coloring.llc_mask)),
            ("bank_color_mask", _hex(p.coloring.bank_mask)),
            ("llc_size", _hex(p.coloring.llc_size or 0)),
            ("llc_ways", str(p.coloring.llc_ways or 0)),
            ("llc_line", str(p.coloring.llc_line or 0)),
        ]
    if p.pci is not None:
        fields.append(("pci", "&pci_host"))
    assert p.ncpus <= MAX_CPUS and len(p.banks) <= MAX_RAM_BANKS
    if p.pci is not None:
        h = p.pci
        w.line("static const struct cfg_pci pci_host = {")
        for key, value in (("ecam_base", _hex(h.ecam.base)), ("bus_first", str(h.bus_first)),
                           ("bus_last", str(h.bus_last)), ("vm_ecam_ipa", _hex(h.vm_ecam)),
                           ("intx", "{ " + ", ".join(str(i) for i in h.intx) + " }")):
            w.line(f"\t.{key} = {value},")
        w.line("};")
        w.line()
    w.line(f"extern const struct uart_ops {uart.of_name(p.uart.driver).ops};")
    w.line(f"extern const struct gic_ops {gic.of_name(p.gic.driver_name).ops};")
    w.line("static const struct cfg_platform platform = {")
    for key, value in fields:
        w.line(f"\t.{key} = {value},")
    w.line("};")


def _gic_dev(g: GicSpec) -> list[tuple[str, str]]:
    """The fields of the GIC's struct gic_dev (drivers/gic/gic.h)."""
    frames = [("gicd", g.gicd), ("gicr", g.gicr), ("gicr_stride", g.gicr_stride)] if g.version == 3 else \
        [("gicd", g.gicd), ("gicc", g.gicc), ("gicc_page_stride", g.page_stride), ("gich", g.gich)]
    return [("ops", f"&{gic.of_name(g.driver_name).ops}"), *((k, _hex(v)) for k, v in frames)]


def _vm_table(w: _Writer, system: System, staged: Sequence[StagedImage], colors: dict[Colors, str],
              l3: dsu.Plan | None) -> None:
    """``vms[]`` (struct cfg_vm) and each VM's own tables."""
    vm_fields: list[list[tuple[str, str]]] = []
    for vm in system.vms:
        w.line()
        part = l3.of(vm.name) if l3 is not None else None
        vm_fields.append(_vm_tables(w, vm, [s for s in staged if s.vm_index == vm.index], colors,
                                    set(dma.unconfined_vms(system.spec)))
                         + _bw_tables(w, system, vm)
                         + ([("pmu_irq", str(pmu))] if (pmu := interrupts.pmu_irq(system.platform, vm.spec)) else [])
                         + ([("l3_scheme", str(part.scheme)), ("l3_groups", _hex(part.groups))] if part else []))

    w.line()
    w.line("static const struct cfg_vm vms[] = {")
    for fields_of_vm in vm_fields:
        w.line("\t{")
        for key, value in fields_of_vm:
            w.line(f"\t\t.{key} = {value},")
        w.line("\t},")
    w.line("};")


def _iommu_tables(w: _Writer, system: System) -> str:
    """The SMMUs to drive, their stream tables and the DMA streams
    (hypervisor/drivers/iommu.h, bulkhead/config/dma.py); returns the
    initializer of cfg_system.iommu ('' when no SMMU is driven)."""
    spec = system.spec
    units = dma.driven(spec)
    if not units:
        return ""
    index = {u.name: k for k, u in enumerate(units)}
    vm_index = {vm.name: vm.index for vm in system.vms}
    table = [st for st in dma.streams(spec) if st.smmu in index]
    w.line()
    w.line("/* DMA isolation: the SMMUs and the streams each VM owns (docs/dma.md) */")
    rows = []
    drivers = {u.name: iommu.of_type(u.type) for u in units}
    extra: dict[int, iommu.Fields] = {}  # id(stream): its driver's fields
    for ops in sorted({d.ops for d in drivers.values() if d.ops}):
        w.line(f"extern const struct iommu_ops {ops};")
    for k, u in enumerate(units):
        mine = [st for st in table if st.smmu == u.name]
        streams = [iommu.Stream(st.sid, vm_index[st.vm]) for st in mine]
        cpu = system.vms[streams[0].vm].cpus[0] if streams else 0
        fields = [("name", _cstr(u.name)), ("ops", f"&{drivers[u.name].ops}"),
                  ("base", _hex(u.base)), ("size", _hex(u.size)),
                  ("event_irq", str(u.event_irq)), ("gerror_irq", str(u.gerror_irq)),
                  ("irq_mpidr", _hex(system.platform.mpidr[cpu]))]
        rows.append(fields + drivers[u.name].unit_fields(k, streams, w.line))
        extra |= {id(st): f for st, f in zip(mine, drivers[u.name].stream_fields(streams), strict=True)}
    w.array("static const struct iommu_unit iommu_units", _struct_rows(rows))
    # each VM's first stream on a unit programs the VM's context there
    first = {id(st) for st in {(st.smmu, st.vm): st for st in reversed(table)}.values()}
    if table:
        w.array("static const struct iommu_stream iommu_streams", _struct_rows(
            [("unit", str(index[st.smmu])), ("sid", _hex(st.sid)), ("vm", str(vm_index[st.vm])),
             ("device", _cstr(st.device)),
             ("flags", " | ".join(f for f, on in (("IOMMU_STREAM_STOP_VM", st.on_fault == "stop-vm"),
                                                  ("IOMMU_STREAM_CTX_FIRST", id(st) in first)) if on) or "0")]
            + extra[id(st)]
            for st in table))
    return (f".nunits = {len(units)}, .units = iommu_units, .nstreams = {len(table)}, "
            f".streams = {'iommu_streams' if table else 'NULL'}")


def _qos_table(w: _Writer, system: System) -> int:
    """The struct cfg_qos array of the regulators to program (bulkhead/qos.py);
    returns their number."""
    plan = qos.plan(system.spec)
    if not plan:
        return 0
    rows = []
    for pr in plan:
        regs = pr.registers()
        rows.append([("name", _cstr(pr.spec.name)),
                     ("devices", _cstr(",".join(f"{d}@{vm}" for d, vm in pr.devices))),
                     ("base", _hex(pr.spec.base)),
                     ("flags", "CFG_QOS_SMC" if pr.spec.access == "smc" else "0"),
                     ("cntl", _hex(regs["qos_cntl"]))]
                    + [(k, _hex(regs[k])) for k in ("ar_r", "ar_b", "ar_p", "aw_r", "aw_b", "aw_p")])
    w.line()
    w.array("static const struct cfg_qos qos_regulators", _struct_rows(rows))
    return len(plan)


def _color_tables(w: _Writer, system: System) -> dict[Colors, str]:
    """Emits every distinct color selection once; returns C references to them."""
    used: list[Colors] = []
    for vm in system.vms:
        used += [m.colors for m in vm.memory if m.colors is not None]
        if vm.pt_colors is not None:
            used.append(vm.pt_colors)
    used += [sh.colors for sh in system.shmems if sh.colors is not None]
    hyp = coloring.hypervisor_selection(system.spec)
    if hyp is not None:
        used.append(hyp)
    if system.pool is not None:
        used.append(system.pool.colors)
    distinct = list(dict.fromkeys(used))
    if not distinct:
        return {}
    w.line()
    w.line("/* page-color selections (hypervisor/isolation/color.h) */")
    for k, c in enumerate(distinct):
        w.array(f"static const u64 color{k}_values", [f"\t{', '.join(_hex(v) for v in c.values)},\n"])
    w.array("static const struct cfg_color colors", _struct_rows(
        [("mask", _hex(c.mask)), ("nvalues", str(len(c.values))), ("values", f"color{k}_values")]
        for k, c in enumerate(distinct)
    ))
    return {c: f"&colors[{k}]" for k, c in enumerate(distinct)}


def _vm_tables(w: _Writer, vm: Vm, staged: Sequence[StagedImage],
               colors: dict[Colors, str], dma_unconfined: set[str]) -> list[tuple[str, str]]:
    """Emits one VM's arrays; returns its cfg_vm initializer fields."""
    pre = f"vm{vm.index}"
    w.line(f"/* VM {vm.index}: {vm.name} ({vm.type}) */")

    def table(ctype: str, suffix: str, rows: list[str], count: int,
              count_field: str = "") -> tuple[tuple[str, str], tuple[str, str]]:
        count_field = count_field or f"n{suffix}"
        if not rows:
            return (count_field, "0"), (suffix, "NULL")
        w.array(f"static const {ctype} {pre}_{suffix}", rows)
        return (count_field, str(count)), (suffix, f"{pre}_{suffix}")

    w.array(f"static const u32 {pre}_cpus", [f"\t{', '.join(str(c) for c in vm.cpus)},\n"])
    mem = table("struct cfg_mem", "mem", _struct_rows(
        [("ipa", _hex(m.ipa)), ("pa", _hex(m.pa)), ("size", _hex(m.size))]
        + ([("color", colors[m.colors]), ("span_end", _hex(m.end))] if m.colors is not None else [])
        for m in vm.memory
    ), len(vm.memory))
    mmio = table("struct cfg_mmio", "mmio", _struct_rows(
        [("name", _cstr(d.name)), ("ipa", _hex(d.ipa)), ("pa", _hex(d.pa)), ("size", _hex(d.size))]
        for d in vm.mmio_maps
    ), len(vm.mmio_maps))
    irqs = table("u32", "irqs", [f"\t{', '.join(str(i) for i in vm.irqs)},\n"] if vm.irqs else [], len(vm.irqs),
                 "nirq")
    images = table("struct cfg_image", "images", _struct_rows(
        [("name", _cstr(s.name)), ("src_pa", _hex(s.src_pa)), ("dst_ipa", _hex(s.dst_ipa)), ("size", _hex(s.size))]
        + ([("placed", "true")] if placed_pa(vm, s) is not None else [])
        for s in staged
    ), len(staged), "nimage")
    shmem = table("struct cfg_shmem_map", "shmem", _struct_rows(
        [("shmem", str(m.index)), ("ipa", _hex(m.ipa)), ("doorbell_irq", str(m.doorbell_irq))] for m in vm.shmem
    ), len(vm.shmem))
    if vm.pt_colors is None:
        # not zeroed at boot (the linker script's .pool): mem.c zeroes each page it hands out
        w.line(f"static cfg_pt_page_t {pre}_pt[{vm.pt_pages}] __section(\".bss.pool\");")
        pt = [("pt_pages", str(vm.pt_pages)), ("pt_pool", f"{pre}_pt")]
    else:  # colored tables: pages of the VM's colors from pt_pa, not the hypervisor's BSS
        pt = [("pt_pages", str(vm.pt_pages)), ("pt_pool", "NULL"), ("pt_color", colors[vm.pt_colors]),
              ("pt_pa", _hex(vm.pt_pa))]
    if vm.llc_colors or vm.bank_colors:
        pt += [("llc_colors", _hex(vm.llc_colors)), ("bank_colors", _hex(vm.bank_colors))]
    pci_fields: list[tuple[str, str]] = []
    if vm.pci and vm.pci_window is not None:
        pci_tab = table("struct cfg_pci_func", "pci", _struct_rows(
            [("name", _cstr(f.label)), ("bdf", _hex(f.bdf)), ("vendor", _hex(f.vendor)),
             ("device", _hex(f.device)), ("intx", str(f.spi))] for f in vm.pci
        ), len(vm.pci))
        pci_fields = [*pci_tab, ("pci_win_base", _hex(vm.pci_window.base)),
                      ("pci_win_size", _hex(vm.pci_window.size))]
    console = vm.console
    return [
        ("name", _cstr(vm.name)),
        ("ncpus", str(len(vm.cpus))),
        ("cpus", f"{pre}_cpus"),
        ("entry", _hex(vm.entry)),
        ("boot_arg", _hex(vm.boot_arg)),
        ("flags", " | ".join([f for f, on in (("CFG_VM_FAULT_STOP", vm.on_fault == "stop"),
                                                ("CFG_VM_MANAGER", vm.spec.manager),
                                                ("CFG_VM_INTROSPECTION", vm.spec.introspection),
                                                ("CFG_VM_DIRECT", vm.spec.interrupts == "direct"),
                                                ("CFG_VM_IDA_START", "start" in vm.spec.ida),
                                                ("CFG_VM_IDA_PERIOD", "period" in vm.spec.ida),
                                                ("CFG_VM_DMA_UNCONFINED", vm.name in dma_unconfined)) if on])
         or "0"),
        *mem, *mmio, *irqs, *images, *shmem,
        ("console_ipa", _hex(console.ipa) if console else "0"),
        ("console_irq", str(console.irq) if console else "0"),
        *pt,
        *pci_fields,
    ]


def _bw_system(w: _Writer, system: System) -> bool:
    """struct cfg_bw_system when any VM is regulated."""
    pb = system.platform.bandwidth
    if pb is None or not any(vm.spec.bandwidth is not None for vm in system.vms):
        return False
    w.line()
    w.line("static const struct cfg_bw_system bw_system = {")
    w.line(f"\t.flags = {'CFG_BW_SPARE_SHARING' if system.spec.spare_sharing else '0'},")
    if pb.overflow_poll_us:
        w.line(f"\t.overflow_poll_us = {pb.overflow_poll_us},")
    if pb.fallback is not None:
        w.line(f"\t.fallback_event = {_hex(pb.fallback.event)},")
        w.line(f"\t.fallback_poll_us = {pb.fallback.overflow_poll_us},")
    w.line(f"\t.counter_hz = {pb.counter_hz},")
    if pb.regulator_events:
        w.line(f"\t.regulator_events = {pb.regulator_events},")
    w.line("};")
    return True


def _bw_tables(w: _Writer, system: System, vm: Vm) -> list[tuple[str, str]]:
    """A regulated VM's struct cfg_bw; returns its cfg_vm field (none if unregulated)."""
    pl = bandwidth.plan(system.platform, vm.spec)
    if pl is None:
        return []
    pre = f"vm{vm.index}_bw"
    budgets = [str(s) for ch in pl.channels for s in ch.shares]
    w.array(f"static const u32 {pre}_budget", [f"\t{', '.join(budgets)},\n"])
    if pl.weights is not None:
        w.array(f"static const u32 {pre}_weights", [f"\t{', '.join(str(x) for x in pl.weights)},\n"])
    typed = any(ch.vcpu_events for ch in pl.channels)
    if typed:
        numbers = [_hex(ch.number_of(i)) for ch in pl.channels for i in range(len(ch.shares))]
        w.array(f"static const u32 {pre}_event", [f"\t{', '.join(numbers)},\n"])
    flags = [f for f, on in (("CFG_BW_CYCLES", pl.cycles), ("CFG_BW_RECLAIM", pl.reclaim)) if on]
    w.line(f"static const struct cfg_bw {pre} = {{")
    for key, value in (
        ("period_us", str(pl.period_us)),
        ("period_ticks", str(pl.period_ticks)),
        ("flags", " | ".join(flags) or "0"),
        ("nevents", str(len(pl.channels))),
        ("event", "{ " + ", ".join(_hex(ch.event.number) for ch in pl.channels) + " }"),
        ("budget", "{ " + ", ".join(str(ch.budget) for ch in pl.channels) + " }"),
        ("vcpu_budget", f"{pre}_budget"),
        ("weights", f"{pre}_weights" if pl.weights is not None else "NULL"),
        *([("vcpu_event", f"{pre}_event")] if typed else []),
    ):
        w.line(f"\t.{key} = {value},")
    w.line("};")
    return [("bw", f"&{pre}")]
