# SPDX-License-Identifier: Apache-2.0
"""What ``bulkhead check`` prints: a table per VM, or a JSON document."""

from __future__ import annotations

from typing import Any, TextIO

from bulkhead.base import term
from bulkhead.config import bandwidth, coloring, dsu, shared_disk, shared_io
from bulkhead.config.color import PAGE, format_bits, format_list
from bulkhead.config.model import human_size
from bulkhead.layout.placement import System, Vm

HEADERS = ("VM", "TYPE", "CPUS", "MEMORY (IPA -> PA, size)", "DEVICES", "IRQS", "CONSOLE", "SHMEM")


def _color_cells(system: System, vm: Vm) -> list[str]:
    model = system.platform.coloring
    if model is None:
        return ["-"]
    if not vm.llc_colors and not vm.bank_colors:
        return ["none"]
    return coloring.share_text(model, vm.llc_colors, vm.bank_colors)


def _cells(system: System, vm: Vm) -> list[list[str]]:
    console = "none"
    if vm.console is not None:
        console = f"0x{vm.console.ipa:x} irq {vm.console.irq}"
        if system.console_input == vm.index:
            console += " (input)"
    shmem = [
        f"{m.name} @0x{m.ipa:x} {human_size(m.size)}" + (f" irq {m.doorbell_irq}" if m.doorbell_irq else "")
        for m in vm.shmem
    ]
    return [
        [vm.name],
        [vm.type],
        [",".join(str(c) for c in vm.cpus)],
        [f"0x{m.ipa:x} -> 0x{m.pa:x} {human_size(m.size)}"
         + (f" colored (span to 0x{m.end - 1:x})" if m.colors is not None else "") for m in vm.memory],
        [", ".join(d.name for d in vm.mmio) or "-"],
        [", ".join(str(i) for i in vm.irqs) or "-"],
        [console],
        shmem or ["-"],
    ]


def cells(system: System) -> tuple[tuple[str, ...], list[list[list[str]]]]:
    """(headers, rows): one row per VM, each cell a list of lines."""
    headers: tuple[str, ...] = HEADERS
    rows = [_cells(system, vm) for vm in system.vms]
    if system.coloring is not None:
        headers = (*HEADERS, "COLORS")
        for row, vm in zip(rows, system.vms, strict=True):
            row.append(_color_cells(system, vm))
    return headers, rows


def footer(system: System) -> list[str]:
    out = _color_footer(system.coloring) if system.coloring is not None else []
    hyp = _hyp_colors_doc(system)
    if hyp is not None:
        out.append(f"hypervisor colors: LLC {format_list(hyp['llc'])}, bank {format_list(hyp['bank'])} "
                   "(reserved: no VM or shared memory may use them; see docs/coloring.md, Self-coloring)")
    pool = _pool_doc(system)
    if pool is not None:
        m = system.platform.coloring
        assert m is not None and system.pool is not None
        out.append(f"recolor pool: {coloring.size_text(pool['size'])} in {coloring.describe(m, system.pool.colors)}, span "
                   f"0x{pool['pa']:x}-0x{pool['span_end']:x} (spare memory for recoloring; docs/coloring.md)")
    return out


def table(system: System) -> str:
    """The plain-text table (pipes, files, CI): columns padded with spaces."""
    headers, vm_rows = cells(system)
    rows = [[[h] for h in headers], *vm_rows]
    widths = [max(len(line) for row in rows for line in row[i]) for i in range(len(headers))]
    out = []
    for row in rows:
        height = max(len(cell) for cell in row)
        for k in range(height):
            parts = [(cell[k] if k < len(cell) else "").ljust(w) for cell, w in zip(row, widths, strict=False)]
            out.append("  ".join(parts).rstrip())
    out += footer(system)
    return "\n".join(out) + "\n"


def print_table(system: System, stream: TextIO) -> None:
    """The same table on a terminal, drawn by rich."""
    headers, vm_rows = cells(system)
    term.print_table(stream, headers, [["\n".join(cell) for cell in row] for row in vm_rows])
    for line in footer(system):
        stream.write(line + "\n")


def _pool_doc(system: System) -> dict[str, Any] | None:
    m = system.platform.coloring
    sp = system.pool
    if m is None or sp is None:
        return None
    return {"size": sp.pages * PAGE, "pa": sp.start, "span_end": sp.end,
            "llc": sorted(sp.colors.colors_over(m.llc_mask)) if m.llc_mask else [0],
            "bank": sorted(sp.colors.colors_over(m.bank_mask)) if m.bank_mask else [0],
            **_colors_doc(sp.colors)}


def _hyp_colors_doc(system: System) -> dict[str, Any] | None:
    m = system.platform.coloring
    hyp = coloring.hypervisor_selection(system.spec)
    if m is None or hyp is None:
        return None
    return {"llc": sorted(hyp.colors_over(m.llc_mask)) if m.llc_mask else [0],
            "bank": sorted(hyp.colors_over(m.bank_mask)) if m.bank_mask else [0],
            **_colors_doc(hyp)}


def _per_color(free: tuple[int, ...]) -> str:
    """``0-7: 90M, 8-15: 74M`` (runs of colors with the same amount)."""
    runs: list[tuple[list[int], str]] = []
    for c, size in enumerate(free):
        text = coloring.size_text(size)
        if runs and runs[-1][1] == text:
            runs[-1][0].append(c)
        else:
            runs.append(([c], text))
    return ", ".join(f"{format_list(cs)}: {text}" for cs, text in runs)


def _color_footer(report: coloring.Report) -> list[str]:
    m = report.model
    out = [""]
    llc = f"LLC color bits {format_bits(m.llc_bits)} ({m.n_llc} colors)" if m.llc_bits else "no LLC color bits"
    bank = f"bank bits {format_bits(m.bank_bits)} ({m.n_bank} colors)" if m.bank_bits else "no bank bits"
    out.append(f"coloring: {llc}, {bank}")
    if report.free_llc:
        out.append(f"free RAM per LLC color: {_per_color(report.free_llc)}")
    if report.free_bank:
        out.append(f"free RAM per bank color: {_per_color(report.free_bank)}")
    return out


def headline(system: System) -> str:
    s = system.spec
    ci = system.vms[system.console_input].name if system.console_input >= 0 else "none"
    n = len(system.vms)
    return (f"{s.display}: OK: platform {system.platform.name}, {n} VM{'s' if n != 1 else ''}, "
            f"console input: {ci}, config hash 0x{system.config_hash:016x}\n")


def document(system: System) -> dict[str, Any]:
    """The resolved configuration as JSON-ready data (addresses as integers)."""
    p = system.platform
    return {
        "config": str(system.spec.file),
        "config_hash": f"0x{system.config_hash:016x}",
        "platform": {
            "name": p.name,
            "file": str(p.file),
            "cpus": list(p.mpidr),
            "ram": {"base": p.ram.base, "size": p.ram.size},
            "ram_banks": [{"base": b.base, "size": b.size} for b in p.banks],
            "hypervisor": {"base": p.hypervisor.base, "size": p.hypervisor.size},
            "staging": {"base": p.staging.base, "size": p.staging.size},
        },
        "console_input": system.vms[system.console_input].name if system.console_input >= 0 else None,
        "vms": [_vm_doc(vm, system) for vm in system.vms],
        "shmem": [
            {"name": sh.name, "pa": sh.pa, "size": sh.size, "vms": list(sh.vms)}
            | ({"colors": _colors_doc(sh.colors)} if sh.colors is not None else {})
            for sh in system.shmems
        ],
    } | ({"coloring": _coloring_doc(system.coloring)} if system.coloring is not None else {}) \
      | ({"io": shared_io.document(system.spec.io, system.spec.disk)} if system.spec.io is not None else {}) \
      | ({"disk": shared_disk.document(system.spec.disk, system.spec.io)} if system.spec.disk is not None else {}) \
      | ({"hypervisor_colors": hyp} if (hyp := _hyp_colors_doc(system)) is not None else {}) \
      | ({"recolor_pool": pool} if (pool := _pool_doc(system)) is not None else {})


def _colors_doc(c: Any) -> dict[str, Any]:
    return {"mask": c.mask, "values": list(c.values)}


def _coloring_doc(report: coloring.Report) -> dict[str, Any]:
    m = report.model
    return {
        "llc_bits": list(m.llc_bits),
        "bank_bits": list(m.bank_bits),
        "l1_bits": list(m.l1_bits),
        "llc": None if m.llc_size is None else {"size": m.llc_size, "ways": m.llc_ways, "line": m.llc_line},
        "colorable": [{"base": r.base, "size": r.size} for r in report.colorable],
        "free_per_llc_color": list(report.free_llc),
        "free_per_bank_color": list(report.free_bank),
    }


def _vm_colors_doc(system: System, vm: Vm) -> dict[str, Any] | None:
    m = system.platform.coloring
    if m is None or system.coloring is None or not (vm.llc_colors or vm.bank_colors):
        return None
    llc = [c for c in range(m.n_llc) if vm.llc_colors >> c & 1]
    bank = [c for c in range(m.n_bank) if vm.bank_colors >> c & 1]
    return {
        "llc": llc,
        "bank": bank,
        "llc_share_kib": coloring.llc_share_kib(m, len(llc)),
        "llc_share": [len(llc), m.n_llc],
        "bank_share": [len(bank), m.n_bank],
        "ram_per_llc_color": {str(c): n for c, n in sorted(system.coloring.vm_llc_bytes(vm.name).items())},
        "pt": None if vm.pt_colors is None else {"pa": vm.pt_pa, "pages": vm.pt_pages,
                                                 **_colors_doc(vm.pt_colors)},
    }


def _vm_doc(vm: Vm, system: System) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "name": vm.name,
        "index": vm.index,
        "type": vm.type,
        "cpus": list(vm.cpus),
        "entry": vm.entry,
        "boot_arg": vm.boot_arg,
        "on_fault": vm.on_fault,
        "memory": [{"ipa": m.ipa, "pa": m.pa, "size": m.size}
                   | ({"span_end": m.end, "colors": _colors_doc(m.colors)} if m.colors is not None else {})
                   for m in vm.memory],
        "devices": [
            {"name": d.name, "base": d.pa, "size": d.size, "irqs": list(d.irqs)} for d in vm.mmio
        ],
        "irqs": list(vm.irqs),
        "console": None if vm.console is None else {"ipa": vm.console.ipa, "irq": vm.console.irq},
        "shmem": [
            {"name": m.name, "ipa": m.ipa, "pa": m.pa, "size": m.size, "doorbell_irq": m.doorbell_irq or None}
            for m in vm.shmem
        ],
        "images": [
            {
                "name": img.name,
                "file": str(img.source) if img.source else None,
                "guest": img.guest,
                "dst_ipa": img.dst_ipa,
                "size": img.size,
            }
            for img in vm.images
        ],
        "pt_pages": vm.pt_pages,
    }
    colors = _vm_colors_doc(system, vm)
    if colors is not None:
        doc["colors"] = colors
    bw = bandwidth.document(system, vm.name)
    if bw is not None:
        doc["bandwidth"] = bw
    l3 = dsu.document(system.spec, vm.name)
    if l3 is not None:
        doc["l3"] = l3
    if vm.spec.manager:
        doc["manager"] = True
    if vm.spec.ida:
        doc["ida"] = list(vm.spec.ida)
    if vm.linux is not None:
        doc["bootargs"] = vm.linux.bootargs
        doc["initrd"] = (None if vm.linux.initrd is None
                         else {"start": vm.linux.initrd.base, "end": vm.linux.initrd.end})
    if vm.params_text is not None:
        doc["params"] = vm.params_text
    return doc
