# SPDX-License-Identifier: Apache-2.0
"""Page coloring in ``config.c``: the color tables, the hypervisor's own
colors and the recoloring pool; the features it needs. docs/coloring.md."""

from __future__ import annotations

from bulkhead.base.csource import CSource, Field, hexa, struct_rows
from bulkhead.config.color import PAGE, Colors
from bulkhead.config.coloring.place import bitmaps
from bulkhead.config.coloring.select import hypervisor_selection
from bulkhead.config.mechanism import Need, SystemView, VmView
from bulkhead.config.model import Platform


def emit_platform(out: CSource, p: Platform) -> list[Field]:
    """struct cfg_platform's color bits and LLC geometry (platform ``coloring:``)."""
    c = p.coloring
    if c is None:
        return []
    return [("llc_color_mask", hexa(c.llc_mask)), ("bank_color_mask", hexa(c.bank_mask)),
            ("llc_size", hexa(c.llc_size or 0)), ("llc_ways", str(c.llc_ways or 0)), ("llc_line", str(c.llc_line or 0))]


def emit_tables(out: CSource, system: SystemView) -> None:
    """Every distinct color selection once (hypervisor/isolation/color.h);
    ``out.ref(colors)`` names it for the tables that follow."""
    used: list[Colors] = []
    for vm in system.vms:
        used += [m.colors for m in vm.memory if m.colors is not None]
        if vm.pt_colors is not None:
            used.append(vm.pt_colors)
    used += [sh.colors for sh in system.shmems if sh.colors is not None]
    hyp = hypervisor_selection(system.spec)
    if hyp is not None:
        used.append(hyp)
    if system.pool is not None:
        used.append(system.pool.colors)
    distinct = list(dict.fromkeys(used))
    if not distinct:
        return
    out.line()
    out.line("/* page-color selections (hypervisor/isolation/color.h) */")
    for k, c in enumerate(distinct):
        out.array(f"static const u64 color{k}_values", [f"\t{', '.join(hexa(v) for v in c.values)},\n"])
    out.array("static const struct cfg_color colors", struct_rows(
        [("mask", hexa(c.mask)), ("nvalues", str(len(c.values))), ("values", f"color{k}_values")]
        for k, c in enumerate(distinct)
    ))
    out.refs |= {c: f"&colors[{k}]" for k, c in enumerate(distinct)}


def emit_system(out: CSource, system: SystemView) -> list[Field]:
    """struct cfg_system's self-coloring and recoloring-pool members."""
    fields: list[Field] = []
    hyp = hypervisor_selection(system.spec)
    if hyp is not None:
        llc, bank = bitmaps(system.platform.coloring, [hyp])
        fields += [("hyp_color", out.ref(hyp)), ("hyp_llc_colors", hexa(llc)), ("hyp_bank_colors", hexa(bank)),
                   ("hyp_color_pa", hexa(system.hyp_color_pa))]
    pool = system.pool
    if pool is not None:
        fields += [("pool_color", out.ref(pool.colors)), ("pool_pa", hexa(pool.start)),
                   ("pool_size", hexa(pool.pages * PAGE)), ("pool_span_end", hexa(pool.end))]
    return fields


def needs(system: SystemView) -> list[Need]:
    """Recoloring for a pool, IDA for each VM that asks for it."""
    out = [Need("RECOLOR", "the configuration", "has a recolor_pool")] if system.pool is not None else []
    return out + [Need("IDA", f"vm {vm.name}", "asks for IDA (ida)") for vm in system.vms if vm.spec.ida]


def emit_vm(out: CSource, system: SystemView, vm: VmView) -> list[Field]:
    """A VM's IDA flags (its colors are in its memory's and table pool's members)."""
    return [("flags", f) for f, on in (("CFG_VM_IDA_START", "start" in vm.spec.ida),
                                       ("CFG_VM_IDA_PERIOD", "period" in vm.spec.ida)) if on]
