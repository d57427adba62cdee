# SPDX-License-Identifier: Apache-2.0
"""Page coloring: the platform's ``coloring:``, ``colors:`` selections,
``hypervisor_colors``, ``recolor_pool`` and a VM's ``ida``. docs/coloring.md."""

from __future__ import annotations

import dataclasses

from bulkhead.config.color import parse_list
from bulkhead.config.mechanism import Keys, Region
from bulkhead.config.model import (
    PA_BITS,
    ColoringSpec,
    ColorSpec,
    Platform,
    PoolSpec,
    SystemSpec,
    VmSpec,
)
from bulkhead.config.reader import Reader, join
from bulkhead.config.yamlpos import YList, YNode, YScalar
from bulkhead.config.yamlpos import describe as describe_node

MAX_COLOR_BITS = 6  # 64 colors per kind: the hypervisor reports them as 64-bit bitmaps


def _parse_coloring(r: Reader, node: YNode) -> ColoringSpec:
    """The platform's ``coloring: {llc, llc_bits, bank_bits, l1_bits}``."""
    path = "coloring"
    m = r.mapping(node, path, ("llc", "llc_bits", "bank_bits", "l1_bits"), (),
                  "a mapping {llc, llc_bits, bank_bits, l1_bits}")

    def bits(key: str) -> tuple[int, ...]:
        q = join(path, key)
        items = r.seq(m[key], q, "a list of PA bit numbers")
        out: list[int] = []
        for i, item in enumerate(items):
            b = r.integer(item, f"{q}[{i}]", f"a PA bit number (12-{PA_BITS - 1})", 12, PA_BITS - 1)
            if b in out:
                raise r.fail(item, f"{q}[{i}]", f"bit {b} is listed twice")
            out.append(b)
        if len(out) > MAX_COLOR_BITS:
            raise r.fail(m[key], q, f"at most {MAX_COLOR_BITS} color bits ({1 << MAX_COLOR_BITS} colors), "
                                    f"got {len(out)}")
        return tuple(sorted(out))

    size = ways = line = None
    llc_bits: tuple[int, ...] = ()
    if "llc" in m:
        q = join(path, "llc")
        size, ways, line = r.cache_geometry(m["llc"], q, "LLC")
        way_bits = (size // ways).bit_length() - 1  # index + offset bits of one way
        llc_bits = tuple(range(12, way_bits))
        if len(llc_bits) > MAX_COLOR_BITS:
            raise r.fail(m["llc"], q, f"this LLC has {1 << len(llc_bits)} page colors; at most "
                                      f"{1 << MAX_COLOR_BITS} are supported (list llc_bits instead)")
    if "llc_bits" in m:
        llc_bits = bits("llc_bits")
    bank_bits = bits("bank_bits") if "bank_bits" in m else ()
    l1_bits = bits("l1_bits") if "l1_bits" in m else ()
    if not llc_bits and not bank_bits:
        raise r.fail(node, path, "no color bits: give llc (geometry), llc_bits or bank_bits")
    return ColoringSpec(llc_bits, bank_bits, l1_bits, size, ways, line, path)




def _color_list(r: Reader, node: YNode, path: str) -> tuple[int, ...]:
    """A color list: "0-3,8" (string), a single integer, or a list of integers."""
    r.visit(node, path)
    what = "a color list like \"0-3,8\" (string), an integer or a list of integers"
    if isinstance(node, YScalar) and type(node.value) is int:
        if node.value < 0:
            raise r.fail(node, path, f"a color number must not be negative, got {node.raw}")
        return (node.value,)
    if isinstance(node, YScalar) and isinstance(node.value, str):
        try:
            return tuple(parse_list(node.value))
        except ValueError as exc:
            raise r.fail(node, path, f"bad color list '{node.value}': {exc} (use e.g. \"0-3,8\")") from None
    if isinstance(node, YList):
        items = r.each(node, path, lambda n, q: r.integer(n, q, "a color number (integer >= 0)", 0))
        if not items:
            raise r.fail(node, path, "an empty color list")
        return tuple(sorted(set(items)))
    raise r.fail(node, path, f"expected {what}, got {describe_node(node)}")


def parse_region(r: Reader, m: Keys, region: Region) -> Region:
    """A memory or shared region's ``colors:`` (:func:`parse_colors`)."""
    if "colors" not in m:
        return region
    return dataclasses.replace(region, colors=parse_colors(r, m["colors"], join(region.path, "colors")))


def parse_colors(r: Reader, node: YNode, path: str) -> ColorSpec:
    """``colors: {llc, bank}`` or ``colors: {mask, value}`` (checked against
    the platform in :mod:`bulkhead.config.coloring`)."""
    m = r.mapping(node, path, ("llc", "bank", "mask", "value"), (),
                  "a color selection (mapping {llc, bank} or {mask, value})")
    raw = [k for k in ("mask", "value") if k in m]
    lists = [k for k in ("llc", "bank") if k in m]
    if raw and lists:
        raise r.fail(m[raw[0]], join(path, raw[0]),
                     "give LLC/bank colors (llc, bank) or a raw pattern (mask, value), not both")
    if raw:
        for key in ("mask", "value"):
            if key not in m:
                raise r.fail(node, path, f"missing required key '{key}' (a raw pattern needs mask and value)")
        return ColorSpec(None, None, r.address(m["mask"], join(path, "mask")),
                         r.address(m["value"], join(path, "value")), path)
    if not lists:
        raise r.fail(node, path, "an empty color selection: give llc and/or bank colors, or mask and value")
    return ColorSpec(
        llc=_color_list(r, m["llc"], join(path, "llc")) if "llc" in m else None,
        bank=_color_list(r, m["bank"], join(path, "bank")) if "bank" in m else None,
        mask=None, value=None, path=path,
    )




def _parse_pool(r: Reader, node: YNode) -> PoolSpec:
    """``recolor_pool: {size, colors}``: spare memory for recoloring."""
    m = r.mapping(node, "recolor_pool", ("size", "colors"), ("size", "colors"),
                  "spare memory for recoloring {size, colors}")
    return PoolSpec(r.size(m["size"], "recolor_pool.size"),
                    parse_colors(r, m["colors"], "recolor_pool.colors"), "recolor_pool")


def parse_platform(r: Reader, top: Keys, p: Platform) -> Platform:
    return dataclasses.replace(p, coloring=_parse_coloring(r, top["coloring"])) if "coloring" in top else p


def parse_system(r: Reader, top: Keys, s: SystemSpec) -> SystemSpec:
    """``hypervisor_colors`` (self-coloring) and ``recolor_pool``."""
    return dataclasses.replace(
        s, hypervisor_colors=parse_colors(r, top["hypervisor_colors"], "hypervisor_colors")
        if "hypervisor_colors" in top else None,
        recolor_pool=_parse_pool(r, top["recolor_pool"]) if "recolor_pool" in top else None)


def parse_vm(r: Reader, m: Keys, vm: VmSpec, p: Platform) -> VmSpec:
    """A VM's ``colors`` and ``ida: [start, period, call]``."""
    return dataclasses.replace(
        vm, colors=parse_colors(r, m["colors"], join(vm.path, "colors")) if "colors" in m else None,
        ida=tuple(sorted(set(r.each(m["ida"], join(vm.path, "ida"), lambda n, q: r.choice(n, q, ("start", "period", "call")),
                                    "a list of 'start', 'period', 'call'")))) if "ida" in m else ())
