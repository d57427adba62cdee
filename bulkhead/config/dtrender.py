# SPDX-License-Identifier: Apache-2.0
"""The platform file ``bulkhead platform import`` writes from an :class:`Imported`.

Every DT-derived value is a key with a comment citing its node; what the
device tree cannot say, or says in a way Bulkhead cannot use yet, is a
``# TODO <key>:`` line (the key a user fills in), with the device tree's own
values beside it where it has some; devices left out say why.
"""

from __future__ import annotations

from collections.abc import Callable

from bulkhead.config.coloring.parse import MAX_COLOR_BITS
from bulkhead.config.dtimport import GUEST_CONSOLE, Imported, flow, hex_value
from bulkhead.config.model import PAGE


def _size(v: int) -> str:
    for unit, shift in (("G", 30), ("M", 20)):
        if v >= 1 << shift and v % (1 << shift) == 0:
            return f"{v >> shift}{unit}"
    return hex_value(v)


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
    _render_cpus_memory(imp, add)
    for note in imp.gic_notes:
        add(f"# {note}" if note.startswith("TODO") else f"# [dt {note}]")
    add("# TODO gic.spis: the number of SPIs (GICD_TYPER.ITLinesNumber; the SoC TRM's interrupt map).")
    if imp.gic:
        add(f"gic: {flow(imp.gic)}")
    if imp.timer:
        add(f"timer: {flow(imp.timer)}  # [dt {imp.timer_node} interrupts: secure, phys, virt, hyp PPIs]")
    else:
        add(f"# {imp.timer_node}")
    for note in imp.uart_notes:
        add(f"# [dt {note}]")
    if imp.uart_todo:
        add(f"# TODO uart: {imp.uart_todo}; the DT's values:")
        add(f"#   uart: {flow(imp.uart)}")
    elif imp.uart:
        add(f"uart: {flow(imp.uart)}")
    add(f"console: {{ipa: 0x{GUEST_CONSOLE[0]:08X}, irq: {GUEST_CONSOLE[1]}}}  # the virtual PL011 VMs see "
        "(Bulkhead's guest platform)")
    _render_smmus(imp, add)
    add("# Memory-mapped devices [dt <node> reg, interrupts (SPI + 32)], one entry per register")
    add("# window; dma: true marks bus masters (the reason is in the comment: iommus, or the")
    add("# node's class). Trim the list to the devices VMs get.")
    add("devices:" if imp.devices else "devices: []")
    for d in imp.devices:
        add(f"  - {flow({k: v for k, v in d.items() if not k.startswith('_')})}  # [dt {d['_note']}]")
    _listed(add, "# Left out (the mmio window must hold every device, outside RAM, none overlapping):",
            imp.dropped)
    _render_bandwidth(imp, add)
    _render_coloring(imp, add)
    add("# TODO qos_regulators: the interconnect's QoS register blocks (SoC TRM), if any.")
    return "\n".join(o) + "\n"


def _render_cpus_memory(imp: Imported, add: Callable[[str], None]) -> None:
    types = sorted({t for _, t, _ in imp.cpus})
    for note in imp.cpu_notes:
        add(f"# note: {note}")
    if len(types) <= 1:
        add(f"cpus: [{', '.join(f'0x{m:x}' for m, _, _ in imp.cpus)}]"
            f"  # MPIDR affinity [dt {imp.cpus[0][2].rsplit('/', 1)[0]}/cpu@* reg], "
            f"{types[0] if types else '?'}")
    else:
        add("# CPUs of different core types (a DynamIQ cluster): each carries its type")
        add("cpus:")
        for m, t, p in imp.cpus:
            add(f"  - {{mpidr: 0x{m:03x}, type: {t}}}  # [dt {p} reg, compatible {imp.cpu_compat.get(p, t)}]")
    if len(imp.ram) == 1:
        b, s, p = imp.ram[0]
        add(f"ram: {{base: 0x{b:X}, size: {_size(s)}}}  # [dt {p}]")
    elif imp.ram:
        add("ram:")
        for b, s, p in imp.ram:
            add(f"  - {{base: 0x{b:X}, size: {_size(s)}}}  # [dt {p}]")
    else:
        add("# TODO ram: the device tree has no memory node (the boot loader fills it in): take")
        add("# the DRAM banks from the boot loader's board code or its `bdinfo`, less what the")
        add("# firmware keeps (BL31, OP-TEE).")
    if imp.reserved:
        add("# /memreserve/ entries and /reserved-memory regions marked no-map: no VM memory,")
        add("# shared memory or colored span is placed over them, and the hypervisor and")
        add("# staging areas avoid them")
        add("reserved:")
        for b, s, p in imp.reserved:
            add(f"  - {{base: 0x{b:X}, size: {hex_value(s)}}}  # [dt {p}]")
    for note in imp.notes:
        add(f"# {note}" if note.startswith("TODO") else f"# note: {note}")
    add("# TODO hypervisor: {base, size} in the first RAM bank, clear of where the boot")
    add("# loader puts itself and the DTB (30M is typical).")
    add("# TODO staging: {base, size} in the first RAM bank: where the payload's images are")
    add("# loaded before the hypervisor copies them into VM memory.")
    if imp.window is not None:
        add("# TODO mmio: {base, size}, the device window the hypervisor maps: the console, the GIC,")
        add(f"# the SMMUs and the devices below lie in {{base: 0x{imp.window[0]:X}, size: 0x{imp.window[1]:X}}}.")
    else:
        add("# TODO mmio: {base, size}, the device window the hypervisor maps.")


def _render_smmus(imp: Imported, add: Callable[[str], None]) -> None:
    if imp.smmus:
        add("# SMMUs [dt <node> reg, interrupts: the first global fault interrupt (SMMU-500) or")
        add("# eventq/gerror (SMMUv3)]; enable: with-streams, the hypervisor programs one only when")
        add("# a VM owns a stream on it (docs/dma.md). Devices' stream_ids are their iommus cells.")
        add("smmus:")
        for u in imp.smmus:
            add(f"  - {flow(u)}")
    _listed(add, "# IOMMUs not listed under smmus: (docs/dma.md):", imp.smmu_notes)


def _listed(add: Callable[[str], None], head: str, items: list[str]) -> None:
    if items:
        add(head)
        for item in items:
            add(f"#   {item}")


def _render_bandwidth(imp: Imported, add: Callable[[str], None]) -> None:
    add("# TODO bandwidth: {counter: event, events: {read_write: {number, bytes_per_event, model}},")
    add("# sustainable_mbps, pmu_irq}: the PMU event model of each core type (the core's TRM, PMU")
    add("# events chapter; BUS_ACCESS 0x19 on most Cortex-A cores), sustainable_mbps (measure: a")
    add("# stride sweep, docs/bandwidth.md), counter_hz (CNTFRQ_EL0); docs/config.md \"bandwidth\".")
    for note in imp.pmu_notes:
        add(f"# [dt {note}]" if not note.startswith("TODO") else f"# {note}")
    if imp.pmu_irq is not None:
        irq = imp.pmu_irq if isinstance(imp.pmu_irq, int) else "[" + ", ".join(map(str, imp.pmu_irq)) + "]"
        add(f"#   pmu_irq: {irq}  # the PMU overflow interrupt(s) the device tree gives")


def _render_coloring(imp: Imported, add: Callable[[str], None]) -> None:
    if imp.llc is None:
        if imp.llc_note:
            add(f"# [dt {imp.llc_note}]")
        add("# TODO coloring: the last-level cache's size, ways and line (the core or DSU TRM)")
        add("# and the DRAM bank bits (SoC TRM); docs/coloring.md.")
        return
    add(f"# [dt {imp.llc_note}]")
    add("# TODO coloring.l1_bits and bank_bits: the L1D index bits above bit 11 (core TRM) and")
    add("# the DRAM controller's bank address bits (SoC TRM); docs/coloring.md.")
    add("coloring:")
    way = imp.llc["size"] // imp.llc["ways"]
    if way > PAGE << MAX_COLOR_BITS:
        bits = list(range(12, 12 + MAX_COLOR_BITS))
        add(f"  # {way // PAGE} colors, Bulkhead takes {1 << MAX_COLOR_BITS}: the lowest index bits above the page")
        add(f"  llc_bits: [{', '.join(map(str, bits))}]  # of llc: {flow(imp.llc)}")
    else:
        add(f"  llc: {{size: {_size(imp.llc['size'])}, ways: {imp.llc['ways']}, line: {imp.llc['line']}}}")
