# SPDX-License-Identifier: Apache-2.0
"""Page-color arithmetic, the same as the hypervisor's (isolation/color.c).

A *pattern* ``(mask, value)`` over physical-address bits accepts address
``a`` when ``a & mask == value``. A :class:`Colors` is a set of patterns over
one mask. A colored memory region is the first ``size / 4 KiB`` compliant
pages at or after its span start; the hypervisor finds each page with
``color_set_next`` and this module must find exactly the same pages
(``tests/test_config_color_xcheck.py`` compares both).

Besides next/prev this module counts compliant pages in a range and finds
the n-th one in O(bits) (no page-by-page walk), so laying out a 1 GiB
colored VM costs microseconds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

PAGE_SHIFT = 12
PAGE = 1 << PAGE_SHIFT
ADDR_BITS = 64
U64 = (1 << ADDR_BITS) - 1
LIST_RE = re.compile(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?\Z")


def color_next(mask: int, value: int, addr: int) -> int | None:
    """Smallest ``a >= addr`` with ``a & mask == value`` (None: none below 2^64)."""
    diff = (addr ^ value) & mask
    if not diff:
        return addr
    h = diff.bit_length() - 1
    low = (2 << h) - 1
    if value >> h & 1:
        return (addr & ~low & U64) | (1 << h) | (value & (low >> 1))
    t = addr | mask | low
    if t >= U64:
        return None
    return ((t + 1) & ~mask & U64) | value


def color_prev(mask: int, value: int, addr: int) -> int | None:
    """Largest ``a <= addr`` with ``a & mask == value`` (None: none)."""
    diff = (addr ^ value) & mask
    if not diff:
        return addr
    h = diff.bit_length() - 1
    low = (2 << h) - 1
    if not value >> h & 1:
        return (addr & ~low & U64) | (~mask & (low >> 1)) | (value & (low >> 1))
    t = addr & ~mask & ~low & U64
    if not t:
        return None
    return ((t - 1) & ~mask & U64) | value


def _rank(mask: int, value: int, x: int) -> int:
    """How many ``y`` in ``[0, x)`` have ``y & mask == value``."""
    total = 0
    for i in range(max(x.bit_length(), value.bit_length()) - 1, -1, -1):
        bit = 1 << i
        if x & bit and not (mask & bit and value & bit):
            # y = x's bits above i, 0 at bit i, anything in the free bits below
            total += 1 << (i - (mask & (bit - 1)).bit_count())
        if mask & bit and (x & bit) != (value & bit):
            return total
    return total


def extract(x: int, bits: int) -> int:
    """The bits of ``x`` selected by ``bits``, packed towards bit 0 in order."""
    out, k = 0, 0
    while bits:
        low = bits & -bits
        if x & low:
            out |= 1 << k
        bits ^= low
        k += 1
    return out


def deposit(n: int, bits: int) -> int:
    """Spreads the low bits of ``n`` over the bits of ``bits`` (inverse of extract)."""
    out, k = 0, 0
    while bits:
        low = bits & -bits
        if n >> k & 1:
            out |= low
        bits ^= low
        k += 1
    return out


def bits_mask(bits: Iterable[int]) -> int:
    m = 0
    for b in bits:
        m |= 1 << b
    return m


def mask_bits(mask: int) -> list[int]:
    return [b for b in range(mask.bit_length()) if mask >> b & 1]


@dataclass(frozen=True)
class Colors:
    """A set of (mask, value) patterns over one mask (values sorted, distinct)."""

    mask: int
    values: tuple[int, ...]

    @staticmethod
    def make(mask: int, values: Iterable[int]) -> Colors | None:
        """The minimal equivalent set, or None when it accepts nothing."""
        vals = {v & mask for v in values}
        if not vals:
            return None
        # Drop every mask bit the set does not constrain: a bit whose flip
        # maps the set onto itself (the same pages are accepted).
        changed = True
        while changed:
            changed = False
            for b in mask_bits(mask):
                bit = 1 << b
                if all(v ^ bit in vals for v in vals):
                    mask &= ~bit
                    vals = {v & ~bit for v in vals}
                    changed = True
        return Colors(mask, tuple(sorted(vals)))

    def match(self, addr: int) -> bool:
        return addr & self.mask in self.values

    def next(self, addr: int) -> int | None:
        found = [a for v in self.values if (a := color_next(self.mask, v, addr)) is not None]
        return min(found, default=None)

    def prev(self, addr: int) -> int | None:
        found = [a for v in self.values if (a := color_prev(self.mask, v, addr)) is not None]
        return max(found, default=None)

    def count(self, lo: int, hi: int) -> int:
        """Compliant 4 KiB pages in ``[lo, hi)`` (page-aligned bounds)."""
        if hi <= lo:
            return 0
        m = self.mask >> PAGE_SHIFT
        return sum(_rank(m, v >> PAGE_SHIFT, hi >> PAGE_SHIFT) - _rank(m, v >> PAGE_SHIFT, lo >> PAGE_SHIFT)
                   for v in self.values)

    def nth(self, start: int, n: int) -> int | None:
        """The ``n``-th (0-based) compliant page at or after ``start``, as the
        hypervisor's walk finds it; None if it would lie beyond 2^64."""
        first = self.next(start)
        if first is None:
            return None
        if n == 0:
            return first
        # smallest page p with count(first, p + PAGE) > n, by exponential then binary search
        step = PAGE
        hi = first + step
        while self.count(first, hi) <= n:
            step *= 2
            hi = first + step
            if hi > U64:
                return None
        lo = first  # count(first, lo) <= n < count(first, hi)
        while hi - lo > PAGE:
            mid = (lo + hi) // 2 // PAGE * PAGE
            if self.count(first, mid) <= n:
                lo = mid
            else:
                hi = mid
        return lo

    def pages(self, start: int, n: int) -> Iterator[int]:
        """The first ``n`` compliant pages at or after ``start`` (page by page)."""
        addr: int | None = start
        for _ in range(n):
            assert addr is not None
            addr = self.next(addr)
            if addr is None:
                return
            yield addr
            addr += PAGE

    def intersect(self, other: Colors) -> Colors | None:
        common = self.mask & other.mask
        return Colors.make(self.mask | other.mask, (
            a | b for a in self.values for b in other.values if not (a ^ b) & common
        ))

    def colors_over(self, bits: int) -> set[int]:
        """Color numbers over ``bits`` (e.g. the LLC bits) that some accepted
        address has."""
        shared = self.mask & bits
        n = 1 << bits.bit_count()
        return {c for c in range(n) if any(not (deposit(c, bits) ^ v) & shared for v in self.values)}


def parse_list(text: str) -> list[int]:
    """``"0-3,8"`` -> ``[0, 1, 2, 3, 8]`` (sorted, duplicates removed).

    Raises ValueError with a message for bad syntax.
    """
    out: set[int] = set()
    if not text.strip():
        raise ValueError("an empty color list")
    for part in text.split(","):
        m = LIST_RE.match(part)
        if not m:
            raise ValueError(f"'{part.strip()}' is not a color N or a range N-M")
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if hi < lo:
            raise ValueError(f"the range '{part.strip()}' ends below its start")
        if hi - lo > 4096:
            raise ValueError(f"the range '{part.strip()}' is too large")
        out.update(range(lo, hi + 1))
    return sorted(out)


def format_list(colors: Iterable[int]) -> str:
    """``[0, 1, 2, 3, 8]`` -> ``"0-3,8"``; empty -> ``"none"``."""
    items = sorted(set(colors))
    if not items:
        return "none"
    parts: list[str] = []
    start = prev = items[0]
    for c in items[1:] + [-2]:
        if c == prev + 1:
            prev = c
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = c
    return ",".join(parts)


def format_bits(bits: Iterable[int]) -> str:
    """Bit numbers as a list: ``[12, 13, 14, 15]`` -> ``"12-15"``."""
    return format_list(bits)


def bitmap(colors: Iterable[int]) -> int:
    out = 0
    for c in colors:
        out |= 1 << c
    return out
