# SPDX-License-Identifier: Apache-2.0
"""Page coloring: a ``colors:`` entry as the platform's colors
(:func:`selection`) and the system's checks (:func:`check`: bad selections,
colors shared between VMs, warnings about L1 partitioning, bank bits that
are also LLC bits, uncolored memory beside colored). docs/coloring.md."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bulkhead.base.errors import Diagnostic
from bulkhead.config.color import PAGE, Colors, deposit, format_list
from bulkhead.config.model import (
    PA_BITS,
    ColoringSpec,
    ColorSpec,
    MemSpec,
    Platform,
    ShmemSpec,
    SystemSpec,
    VmSpec,
)
from bulkhead.config.reader import join


def size_text(size: int) -> str:
    """A byte count for messages: ``1G``, ``256M``, ``93.5M``, ``12K``."""
    for unit, shift in (("G", 30), ("M", 20)):
        if size >= 1 << shift:
            if size % (1 << shift) == 0:
                return f"{size >> shift}{unit}"
            return f"{size / (1 << shift):.1f}{unit}"
    if size % 1024 == 0:
        return f"{size >> 10}K"
    return f"{size}B"


def selection(model: ColoringSpec, spec: ColorSpec) -> Colors | None:
    """The pattern set of a checked selection; None when it selects nothing."""
    if spec.mask is not None:
        assert spec.value is not None
        return Colors.make(spec.mask, (spec.value,))
    llc_mask = model.llc_mask if spec.llc is not None else 0
    bank_mask = model.bank_mask if spec.bank is not None else 0
    shared = llc_mask & bank_mask
    llc_vals = [deposit(c, model.llc_mask) for c in spec.llc] if spec.llc is not None else [0]
    bank_vals = [deposit(c, model.bank_mask) for c in spec.bank] if spec.bank is not None else [0]
    return Colors.make(llc_mask | bank_mask, (
        a | b for a in llc_vals for b in bank_vals if not (a ^ b) & shared
    ))


def describe(model: ColoringSpec, colors: Colors | None) -> str:
    """``LLC colors 0-7, bank color 1`` (the projections of a pattern set;
    a kind with every color is left out)."""
    parts = []
    for kind, mask, n in (("LLC", model.llc_mask, model.n_llc), ("bank", model.bank_mask, model.n_bank)):
        if not mask:
            continue
        sel = sorted(colors.colors_over(mask)) if colors else list(range(n))
        if len(sel) < n:
            parts.append(f"{kind} color{'s' if len(sel) > 1 else ''} {format_list(sel)}")
    return ", ".join(parts) or "all colors"


# --- checks ----------------------------------------------------------------


@dataclass(frozen=True)
class _Item:
    """A colored (or not) piece of a VM's memory, for the overlap checks."""

    vm: VmSpec
    colors: Colors | None
    path: str  # where its colors were given (or the region)


def region_spec(vm: VmSpec, mem: MemSpec) -> ColorSpec | None:
    return mem.colors if mem.colors is not None else vm.colors


def _selections(s: SystemSpec) -> Iterable[ColorSpec]:
    for vm in s.vms:
        if vm.colors is not None:
            yield vm.colors
        for mem in vm.memory:
            if mem.colors is not None:
                yield mem.colors
    for sh in s.shmem:
        if sh.colors is not None:
            yield sh.colors
    if s.hypervisor_colors is not None:
        yield s.hypervisor_colors
    if s.recolor_pool is not None:
        yield s.recolor_pool.colors


def pool_selection(s: SystemSpec) -> Colors | None:
    """The recolor pool's colors (``recolor_pool``), or None."""
    model = s.platform.coloring
    if model is None or s.recolor_pool is None:
        return None
    return selection(model, s.recolor_pool.colors)


def hypervisor_selection(s: SystemSpec) -> Colors | None:
    """The hypervisor's own colors (``hypervisor_colors``), or None."""
    model = s.platform.coloring
    if model is None or s.hypervisor_colors is None:
        return None
    return selection(model, s.hypervisor_colors)


def _check_selection(s: SystemSpec, model: ColoringSpec, spec: ColorSpec, errors: list[Diagnostic]) -> bool:
    p = s.platform
    ok = True

    def error(path: str, message: str) -> None:
        nonlocal ok
        ok = False
        errors.append(s.locs.diag(path, message))

    if spec.mask is not None:
        assert spec.value is not None
        mask, value = spec.mask, spec.value
        mpath, vpath = join(spec.path, "mask"), join(spec.path, "value")
        if mask == 0:
            error(mpath, "an empty mask selects every page; omit 'colors' instead")
        if mask & (PAGE - 1):
            error(mpath, f"mask 0x{mask:x} has bits below bit 12 (0x{mask & (PAGE - 1):x}): colors select "
                         "whole 4 KiB pages")
        if mask >> PA_BITS:
            error(mpath, f"mask 0x{mask:x} has bits at or above bit {PA_BITS}, beyond the physical address space")
        if value & ~mask:
            error(vpath, f"value 0x{value:x} has bits outside the mask 0x{mask:x} (0x{value & ~mask:x})")
        return ok
    for key, sel, n, kind in (("llc", spec.llc, model.n_llc, "LLC"), ("bank", spec.bank, model.n_bank, "bank")):
        if sel is None:
            continue
        bits = model.llc_bits if key == "llc" else model.bank_bits
        if not bits:
            error(join(spec.path, key), f"platform '{p.name}' declares no {kind} color bits")
            continue
        bad = [c for c in sel if c >= n]
        if bad:
            error(join(spec.path, key), f"{kind} color{'s' if len(bad) > 1 else ''} {format_list(bad)} "
                                        f"out of range: platform '{p.name}' has {n} {kind} colors (0-{n - 1})")
    if ok and selection(model, spec) is None:
        error(spec.path, "selects no page: the LLC and bank colors disagree on the bits they share")
    return ok


def _vm_items(model: ColoringSpec, vm: VmSpec, good: dict[str, bool]) -> list[_Item]:
    items = []
    for mem in vm.memory:
        spec = region_spec(vm, mem)
        if spec is not None and not good.get(spec.path, False):
            continue
        items.append(_Item(vm, selection(model, spec) if spec else None,
                           spec.path if spec else mem.path))
    return items


def shmem_colors(s: SystemSpec, sh: ShmemSpec) -> tuple[Colors | None, str]:
    """Colors of a shared-memory region and why: ``explicit``, ``users``
    (the intersection of its users' LLC colors), ``none`` (nobody colored)
    or ``disjoint`` (its users have no LLC color in common)."""
    model = s.platform.coloring
    if model is None:
        return None, "none"
    if sh.colors is not None:
        return selection(model, sh.colors), "explicit"
    users = [vm for mp in sh.maps if (vm := s.vm(mp.vm)) is not None]
    colored = [vm for vm in users if vm.colors is not None]
    if not colored or not model.llc_bits:
        return None, "none"
    common = set(range(model.n_llc))
    for vm in colored:
        assert vm.colors is not None
        sel = selection(model, vm.colors)
        common &= sel.colors_over(model.llc_mask) if sel else set()
    if not common or len(common) == model.n_llc:
        return None, "disjoint"
    return selection(model, ColorSpec(tuple(sorted(common)), None, None, None, sh.path)), "users"


def check(s: SystemSpec) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """(errors, warnings) about the colors of ``s`` and its VMs' IDA."""
    errors = _check_ida(s)
    warnings: list[Diagnostic] = []
    p = s.platform
    model = p.coloring
    specs = list(_selections(s))
    if model is None:
        for spec in specs:
            errors.append(s.locs.diag(spec.path, f"platform '{p.name}' declares no page coloring "
                                                 f"(add a 'coloring:' section to {p.display})"))
        return errors, warnings
    if not specs:
        return errors, warnings

    _check_bank_bits(p, model, warnings)
    good = {spec.path: _check_selection(s, model, spec, errors) for spec in specs}
    _check_l1(s, model, specs, good, warnings)
    items = {vm.name: _vm_items(model, vm, good) for vm in s.vms}
    _check_vms_disjoint(s, model, items, errors, warnings)
    hyp_spec = s.hypervisor_colors
    hyp = selection(model, hyp_spec) if hyp_spec is not None and good.get(hyp_spec.path, False) else None
    _check_hypervisor_colors(s, model, items, hyp, errors)
    _check_pool(s, model, good, hyp, errors)
    _check_shmem(s, model, items, good, errors, warnings)
    return errors, warnings


def _check_ida(s: SystemSpec) -> list[Diagnostic]:
    """Invalidation-driven allocation: only a colored VM has sets of its own."""
    errors = []
    for vm in s.vms:
        if vm.ida and (vm.colors is None or s.platform.coloring is None):
            errors.append(s.locs.diag(join(vm.path, "ida"), f"VM '{vm.name}': 'ida' needs the VM to be colored "
                                      "(an uncolored VM shares every cache set)"))
        if "period" in vm.ida and vm.bandwidth is None:
            errors.append(s.locs.diag(join(vm.path, "ida"), f"VM '{vm.name}': 'ida: [period]' needs a 'bandwidth' "
                                      "reservation (its periods)"))
    return errors


def _check_bank_bits(p: Platform, model: ColoringSpec, warnings: list[Diagnostic]) -> None:
    """Bank bits that are also LLC color bits make the two kinds dependent."""
    overlap = model.llc_mask & model.bank_mask
    if overlap:
        bits = [b for b in model.bank_bits if overlap >> b & 1]
        what = f"bits {format_list(bits)} are also LLC color bits" if len(bits) > 1 else \
            f"bit {bits[0]} is also an LLC color bit"
        warnings.append(p.locs.diag(join(model.path, "bank_bits"),
                                    f"bank {what}: LLC and bank colors are not independent"))


def _check_l1(s: SystemSpec, model: ColoringSpec, specs: list[ColorSpec], good: dict[str, bool],
              warnings: list[Diagnostic]) -> None:
    """A selection that fixes L1 index bits partitions the L1 too."""
    for spec in specs:
        if not good[spec.path]:
            continue
        sel = selection(model, spec)
        if sel is not None and sel.mask & model.l1_mask:
            bits = [b for b in model.l1_bits if sel.mask >> b & 1]
            plural = len(bits) > 1
            warnings.append(s.locs.diag(spec.path, (
                f"these colors also partition the L1 cache: PA bit{'s' if plural else ''} {format_list(bits)} "
                f"{'index' if plural else 'indexes'} the L1 too, and this selection fixes "
                f"{'them' if plural else 'it'}; choose colors that come in pairs differing only in "
                f"{'those bits' if plural else 'that bit'} (e.g. 0-7 rather than 0,2,4,6)")))


def _check_vms_disjoint(s: SystemSpec, model: ColoringSpec, items: dict[str, list[_Item]],
                        errors: list[Diagnostic], warnings: list[Diagnostic]) -> None:
    """The colors of different VMs do not intersect; an uncolored VM beside
    colored ones shares their cache (a warning)."""
    for i, b in enumerate(s.vms):
        for a in s.vms[:i]:
            found = _first_common(items[a.name], items[b.name])
            if found is None:
                continue
            ia, ib, common = found
            errors.append(s.locs.diag(ib.path, (
                f"the colors of VM '{b.name}' overlap those of VM '{a.name}' ({ia.path}): "
                f"{describe(model, common)} in common; give each VM its own colors "
                "(memory they share belongs in 'shmem')")))
    colored_vms = [vm.name for vm in s.vms if any(it.colors is not None for it in items[vm.name])]
    for vm in s.vms:
        if vm.name in colored_vms or vm.colors is not None:
            continue
        others = [n for n in colored_vms if n != vm.name]
        if others:
            warnings.append(s.locs.diag(vm.path, (
                f"VM '{vm.name}' has no colors: its memory spans every cache color, so it shares the "
                f"cache with colored VM{'s' if len(others) > 1 else ''} {', '.join(others)}")))


def _check_hypervisor_colors(s: SystemSpec, model: ColoringSpec, items: dict[str, list[_Item]],
                             hyp: Colors | None, errors: list[Diagnostic]) -> None:
    """Self-coloring: nothing else uses the hypervisor's colors."""
    if hyp is None:
        return
    for vm in s.vms:
        for it in items[vm.name]:
            if it.colors is None:
                errors.append(s.locs.diag(vm.path, (
                    f"VM '{vm.name}' has no colors: its memory spans every color, the hypervisor's "
                    "('hypervisor_colors') too; give it colors")))
                break
            in_hyp = it.colors.intersect(hyp)
            if in_hyp is not None:
                errors.append(s.locs.diag(it.path, (
                    f"the colors of VM '{vm.name}' overlap the hypervisor's ('hypervisor_colors'): "
                    f"{describe(model, in_hyp)} in common")))
                break
    for sh in s.shmem:
        sh_colors = shmem_colors(s, sh)[0]
        sh_hyp = sh_colors.intersect(hyp) if sh_colors is not None else None
        if sh_colors is None or sh_hyp is not None:
            what = "is not colored" if sh_colors is None else \
                f"has colors of the hypervisor's ('hypervisor_colors'): {describe(model, sh_hyp)}"
            errors.append(s.locs.diag(sh.colors.path if sh.colors is not None else sh.path,
                                      f"shared memory '{sh.name}' {what}"))


def _check_pool(s: SystemSpec, model: ColoringSpec, good: dict[str, bool], hyp: Colors | None,
                errors: list[Diagnostic]) -> None:
    """Spare memory for recoloring: whole pages, any colors but the hypervisor's."""
    pool = s.recolor_pool
    if pool is not None:
        if pool.size == 0 or pool.size % PAGE:
            errors.append(s.locs.diag(join(pool.path, "size"), (
                f"the recolor pool's size ({pool.size} bytes) must be a non-zero multiple of 4 KiB")))
        pool_sel = selection(model, pool.colors) if good.get(pool.colors.path, False) else None
        in_hyp = pool_sel.intersect(hyp) if pool_sel is not None and hyp is not None else None
        if in_hyp is not None:
            errors.append(s.locs.diag(pool.colors.path, (
                "the recolor pool's colors overlap the hypervisor's ('hypervisor_colors'): "
                f"{describe(model, in_hyp)} in common")))


def _check_shmem(s: SystemSpec, model: ColoringSpec, items: dict[str, list[_Item]], good: dict[str, bool],
                 errors: list[Diagnostic], warnings: list[Diagnostic]) -> None:
    """Shared memory: colored (its own colors or its users' common ones) and
    not in the colors of a VM that does not map it."""
    for sh in s.shmem:
        if sh.colors is not None and not good.get(sh.colors.path, False):
            continue
        colors, why = shmem_colors(s, sh)
        users = {mp.vm for mp in sh.maps}
        if why == "disjoint":
            warnings.append(s.locs.diag(sh.path, (
                f"shared memory '{sh.name}' is not colored: its users have no LLC color in common "
                "(give it 'colors:'); it occupies cache sets of every color")))
        if colors is None:
            continue
        for vm in s.vms:
            if vm.name in users:
                continue
            for it in items[vm.name]:
                shared = it.colors.intersect(colors) if it.colors is not None else None
                if shared is not None:
                    where = sh.colors.path if sh.colors is not None else sh.path
                    hint = "" if sh.colors is not None else " (its colors are its users' common LLC colors; " \
                                                            "give it 'colors:')"
                    errors.append(s.locs.diag(where, (
                        f"the colors of shared memory '{sh.name}' overlap those of VM '{vm.name}', which does "
                        f"not map it: {describe(model, shared)} in common{hint}")))
                    break


def _first_common(xs: Sequence[_Item], ys: Sequence[_Item]) -> tuple[_Item, _Item, Colors] | None:
    for y in ys:
        for x in xs:
            if x.colors is None or y.colors is None:
                continue
            common = x.colors.intersect(y.colors)
            if common is not None:
                return x, y, common
    return None
