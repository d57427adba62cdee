# SPDX-License-Identifier: Apache-2.0
"""Page coloring of a system: selections, checks, placement and report.

- :func:`selection` turns a ``colors:`` entry into a :class:`~bulkhead.config.color.Colors`
  over the platform's color bits (LLC colors x bank colors, or a raw pattern).
- :func:`check` (called by :mod:`bulkhead.config.validate`) reports bad selections,
  overlapping colors between VMs, and warnings (L1 partitioning, bank bits
  that are also LLC bits, uncolored VMs or shared memory beside colored ones).
- :func:`place` (called by :mod:`bulkhead.layout.placement`) chooses the span start of
  every colored region, of each colored VM's stage-2 table pool and of colored
  shared memory, first fit: spans of regions whose colors intersect never
  overlap, spans of disjoint colors may (their pages interleave).

See docs/coloring.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bulkhead.base.errors import Diagnostic
from bulkhead.config.color import PAGE, Colors, bitmap, deposit, format_list
from bulkhead.config.model import ColoringSpec, ColorSpec, MemSpec, Platform, Range, ShmemSpec, SystemSpec, VmSpec
from bulkhead.config.reader import join
from bulkhead.config.schema import PA_BITS

SpanKey = tuple[str, int, int]  # ("mem", vm, region) | ("pt", vm, 0) | ("shmem", index, 0) | ("hyp", 0, 0)
#                                   | ("pool", 0, 0)


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
    """(errors, warnings) about the colors of ``s``."""
    errors: list[Diagnostic] = []
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


# --- placement -------------------------------------------------------------


@dataclass(frozen=True)
class Span:
    """Where a colored region's pages are: the first ``pages`` pages of
    ``colors`` from ``start``; all of them lie in ``[start, end)``."""

    key: SpanKey
    what: str  # for messages and the report
    vm: str | None  # owner (None: shared memory)
    colors: Colors
    start: int
    end: int
    pages: int

    def overlaps(self, start: int, end: int) -> bool:
        return self.start < end and start < self.end


@dataclass(frozen=True)
class Request:
    key: SpanKey
    what: str
    vm: str | None
    colors: Colors
    pages: int
    path: str  # for errors
    fixed: int | None = None  # explicit span start (pa:)
    after_own: bool = False  # start after the owner's other spans (stage-2 table pools)


def _find(req: Request, free: Sequence[Range], spans: Sequence[Span]) -> Span | str:
    """First-fit span for ``req``; a reason string when there is none."""
    c = req.colors
    rivals = [sp for sp in spans if sp.colors.intersect(c) is not None]
    floor = max((sp.end for sp in spans if req.after_own and sp.vm == req.vm), default=0)
    if req.fixed is not None:
        candidates = [req.fixed]
    else:
        candidates = sorted({f.base for f in free} | {sp.end for sp in rivals} | {floor})
    for cand in candidates:
        if cand < floor:
            continue
        first = c.next(cand)
        last = c.nth(cand, req.pages - 1) if first is not None else None
        if first is None or last is None:
            continue
        end = last + PAGE
        if not any(f.base <= first and end <= f.end for f in free):
            continue
        if any(sp.overlaps(first, end) for sp in rivals):
            continue
        return Span(req.key, req.what, req.vm, c, first, end, req.pages)
    if req.fixed is not None:
        first = c.next(req.fixed)
        last = c.nth(req.fixed, req.pages - 1)
        if first is None or last is None:
            return f"no {req.pages} pages of these colors above 0x{req.fixed:x}"
        span = Range(first, last + PAGE - first)
        for sp in rivals:
            if sp.overlaps(span.base, span.end):
                return (f"its pages (span {span}) collide with those of {sp.what} "
                        f"(span {Range(sp.start, sp.end - sp.start)}, intersecting colors)")
        return f"its pages (span {span}) are not all in free RAM"
    return _shortage(req, free, rivals, floor)


def _shortage(req: Request, free: Sequence[Range], rivals: Sequence[Span], floor: int) -> str:
    """Explains why ``req`` does not fit: how much RAM of its colors is free."""
    c = req.colors
    need = req.pages * PAGE
    free_pages = sum(c.count(f.base, f.end) for f in free)
    for sp in rivals:
        common = sp.colors.intersect(c)
        if common is not None:
            free_pages -= common.count(sp.start, sp.end)
    best = 0
    for f in free:
        starts = {f.base} | {sp.end for sp in rivals if f.base <= sp.end < f.end}
        for cand in starts:
            cand = max(cand, floor)
            if cand >= f.end or any(sp.start <= cand < sp.end for sp in rivals):
                continue
            limit = min([f.end] + [sp.start for sp in rivals if sp.start > cand])
            best = max(best, c.count(cand, limit))
    where = ", ".join(str(f) for f in free[:3]) + (", ..." if len(free) > 3 else "")
    have = free_pages * PAGE
    text = f"{size_text(have)} of RAM in these colors is free (colorable RAM: {where or 'none'})"
    if have < need:
        return f"{text}; {size_text(need - have)} missing"
    return f"{text}, but the longest usable run holds only {size_text(best * PAGE)} (fragmented)"


def fixed_spans(reqs: Iterable[Request]) -> list[Range]:
    """The spans of colored regions with an explicit ``pa`` (kept free of
    contiguous memory; collisions between them are found by :func:`place`)."""
    out = []
    for req in reqs:
        if req.fixed is None:
            continue
        first = req.colors.next(req.fixed)
        last = req.colors.nth(req.fixed, req.pages - 1)
        if first is not None and last is not None:
            out.append(Range(first, last + PAGE - first))
    return out


def requests(s: SystemSpec, pt_pages: dict[int, int]) -> list[Request]:
    """Every colored piece of memory, in placement order: each VM's regions
    then its table pool (VM order), then shared memory."""
    model = s.platform.coloring
    if model is None:
        return []
    out: list[Request] = []
    for vm in s.vms:
        for j, mem in enumerate(vm.memory):
            spec = region_spec(vm, mem)
            colors = selection(model, spec) if spec is not None else None
            if colors is None:
                continue
            path = join(mem.path, "pa" if mem.pa is not None else "size")
            out.append(Request(("mem", vm.index, j), mem.path, vm.name, colors, mem.size // PAGE, path, mem.pa))
        vm_colors = selection(model, vm.colors) if vm.colors is not None else None
        if vm_colors is not None:
            out.append(Request(("pt", vm.index, 0), f"the stage-2 tables of VM '{vm.name}'", vm.name, vm_colors,
                               pt_pages[vm.index], vm.colors.path if vm.colors else vm.path, None, True))
    for sh in s.shmem:
        colors, _ = shmem_colors(s, sh)
        if colors is None:
            continue
        path = join(sh.path, "pa" if sh.pa is not None else "size")
        out.append(Request(("shmem", sh.index, 0), f"shared memory '{sh.name}'", None, colors, sh.size // PAGE,
                           path, sh.pa))
    hyp = hypervisor_selection(s)
    if hyp is not None and s.hypervisor_colors is not None:
        # self-coloring: frames of the hypervisor's colors for each page of its area
        out.append(Request(("hyp", 0, 0), "the hypervisor's colored frames", None, hyp,
                           s.platform.hypervisor.size // PAGE, s.hypervisor_colors.path, None))
    pool = pool_selection(s)
    if pool is not None and s.recolor_pool is not None:
        # spare memory for recoloring, placed last
        out.append(Request(("pool", 0, 0), "the recolor pool", None, pool, s.recolor_pool.size // PAGE,
                           join(s.recolor_pool.path, "size"), None))
    return out


def place(s: SystemSpec, free: Sequence[Range], reqs: Sequence[Request]) -> tuple[dict[SpanKey, Span],
                                                                                  list[Diagnostic]]:
    """Spans for ``reqs`` inside the ``free`` RAM (what uncolored memory left)."""
    model = s.platform.coloring
    spans: list[Span] = []
    diags: list[Diagnostic] = []
    for req in reqs:
        found = _find(req, free, spans)
        if isinstance(found, Span):
            spans.append(found)
            continue
        assert model is not None
        head = (f"colored region at PA 0x{req.fixed:x}" if req.fixed is not None
                else f"not enough free RAM for {size_text(req.pages * PAGE)}"
                + (f" ({req.what})" if req.key[0] in ("pt", "pool") else ""))
        diags.append(s.locs.diag(req.path, f"{head} in {describe(model, req.colors)}: {found}"))
    return {sp.key: sp for sp in spans}, diags


# --- report ----------------------------------------------------------------


@dataclass(frozen=True)
class Report:
    """What ``bulkhead check`` shows about coloring."""

    model: ColoringSpec
    spans: tuple[Span, ...]
    colorable: tuple[Range, ...]  # free RAM the colored spans come from
    free_llc: tuple[int, ...]  # bytes still free per LLC color (in colorable RAM)
    free_bank: tuple[int, ...]

    def vm_llc_bytes(self, vm: str) -> dict[int, int]:
        """Bytes of the VM's colored RAM per LLC color (table pools excluded)."""
        out: dict[int, int] = {}
        for sp in self.spans:
            if sp.vm != vm or sp.key[0] != "mem":
                continue
            for c in range(self.model.n_llc):
                pat = Colors(self.model.llc_mask, (deposit(c, self.model.llc_mask),))
                common = sp.colors.intersect(pat)
                n = common.count(sp.start, sp.end) if common is not None else 0
                if n:
                    out[c] = out.get(c, 0) + n * PAGE
        return out


def report(model: ColoringSpec, free: Sequence[Range], spans: Iterable[Span]) -> Report:
    spans = tuple(spans)

    def per_color(bits: int, n: int) -> tuple[int, ...]:
        out = []
        for c in range(n):
            pat = Colors(bits, (deposit(c, bits),))
            pages = sum(pat.count(f.base, f.end) for f in free)
            for sp in spans:
                common = sp.colors.intersect(pat)
                if common is not None:
                    pages -= common.count(sp.start, sp.end)
            out.append(pages * PAGE)
        return tuple(out)

    return Report(model, spans, tuple(free),
                  per_color(model.llc_mask, model.n_llc) if model.llc_bits else (),
                  per_color(model.bank_mask, model.n_bank) if model.bank_bits else ())


def bitmaps(model: ColoringSpec | None, regions: Sequence[Colors | None]) -> tuple[int, int]:
    """(LLC, bank) color bitmaps of a VM's RAM for BH_HC_COLOR_INFO; (0, 0) =
    every color (an uncolored region makes the whole VM 'every color')."""
    if model is None or not regions or any(c is None for c in regions):
        return 0, 0
    llc: set[int] = set()
    bank: set[int] = set()
    for c in regions:
        assert c is not None
        llc |= c.colors_over(model.llc_mask)
        bank |= c.colors_over(model.bank_mask)
    return bitmap(llc), bitmap(bank)


def share_text(model: ColoringSpec, llc_bitmap: int, bank_bitmap: int) -> list[str]:
    """Table lines: ``LLC 0-7 (512K of 1M)``, ``bank 0-1 (2/4)``."""
    lines = []
    if model.llc_bits:
        llc = [c for c in range(model.n_llc) if llc_bitmap >> c & 1] if llc_bitmap else list(range(model.n_llc))
        share = llc_share_kib(model, len(llc))
        size = f"{size_text(share << 10)} of {size_text(model.llc_size)}" \
            if share is not None and model.llc_size else f"{len(llc)}/{model.n_llc}"
        lines.append(f"LLC {format_list(llc) if len(llc) < model.n_llc else 'all'} ({size})")
    if model.bank_bits:
        bank = [c for c in range(model.n_bank) if bank_bitmap >> c & 1] if bank_bitmap else \
            list(range(model.n_bank))
        lines.append(f"bank {format_list(bank) if len(bank) < model.n_bank else 'all'} "
                     f"({len(bank)}/{model.n_bank})")
    return lines


def llc_share_kib(model: ColoringSpec, ncolors: int) -> int | None:
    """Effective LLC share: size x chosen colors / all colors, in KiB."""
    if model.llc_size is None or not model.llc_bits:
        return None
    return model.llc_size * ncolors // model.n_llc >> 10
