# SPDX-License-Identifier: Apache-2.0
"""Page coloring: placement and report. :func:`place` (called by
:mod:`bulkhead.layout.placement`) chooses the span start of every colored
region, of each colored VM's stage-2 table pool and of colored shared
memory, first fit: spans of regions whose colors intersect never overlap,
spans of disjoint colors may (their pages interleave). docs/coloring.md."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bulkhead.base.errors import Diagnostic
from bulkhead.config.color import PAGE, Colors, bitmap, deposit, format_list
from bulkhead.config.coloring.select import (
    describe,
    hypervisor_selection,
    pool_selection,
    region_spec,
    selection,
    shmem_colors,
    size_text,
)
from bulkhead.config.model import (
    ColoringSpec,
    Range,
    SystemSpec,
)
from bulkhead.config.reader import join

SpanKey = tuple[str, int, int]  # ("mem", vm, region) | ("pt", vm, 0) | ("shmem", index, 0) | ("hyp", 0, 0)
#                                   | ("pool", 0, 0)




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
