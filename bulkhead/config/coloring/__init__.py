# SPDX-License-Identifier: Apache-2.0
"""Page coloring, the mechanism (docs/coloring.md): one module per stage.

- :mod:`.parse`: the platform's ``coloring:``, ``colors:`` selections, the
  system's ``hypervisor_colors`` and ``recolor_pool``, a VM's ``ida``.
- :mod:`.select`: :func:`selection` turns a ``colors:`` entry into a
  :class:`~bulkhead.config.color.Colors` over the platform's color bits;
  :func:`check` reports bad selections, colors shared between VMs and
  warnings (L1 partitioning, bank bits that are also LLC bits, uncolored
  memory beside colored ones) and the VMs' IDA.
- :mod:`.place`: :func:`place` (called by :mod:`bulkhead.layout.placement`)
  chooses every colored span, first fit; :func:`report` for ``check``.
- :mod:`.emit`: the color tables of ``config.c``, the hypervisor's colors and
  the recoloring pool; the RECOLOR and IDA features.
"""

from __future__ import annotations

from bulkhead.config.coloring.emit import emit_platform, emit_system, emit_tables, emit_vm, needs
from bulkhead.config.coloring.parse import (
    MAX_COLOR_BITS,
    parse_colors,
    parse_platform,
    parse_region,
    parse_system,
    parse_vm,
)
from bulkhead.config.coloring.place import (
    Report,
    Request,
    Span,
    SpanKey,
    bitmaps,
    fixed_spans,
    llc_share_kib,
    place,
    report,
    requests,
    share_text,
)
from bulkhead.config.coloring.select import (
    check,
    describe,
    hypervisor_selection,
    pool_selection,
    region_spec,
    selection,
    shmem_colors,
    size_text,
)
from bulkhead.config.mechanism import Mechanism

__all__ = ["MAX_COLOR_BITS", "MECHANISM", "Report", "Request", "Span", "SpanKey", "bitmaps", "check", "describe",
           "fixed_spans", "hypervisor_selection", "llc_share_kib", "parse_colors", "place", "pool_selection",
           "region_spec", "report", "requests", "selection", "share_text", "shmem_colors", "size_text"]

MECHANISM = Mechanism(
    name="coloring", rank=10, docs="docs/coloring.md",
    features={"RECOLOR": ("isolation/color_recolor.c",), "IDA": ("isolation/color_ida.c",)},
    platform_keys=("coloring",), system_keys=("hypervisor_colors", "recolor_pool"), vm_keys=("colors", "ida"),
    region_keys=("colors",), device_keys=(),
    parse_platform=parse_platform, parse_system=parse_system, parse_vm=parse_vm, parse_region=parse_region,
    check_device=None, parse_device=None,
    check_platform=None, check=check, ipa_items=None, reserved_ram=None, guest_params=None,
    limits=(), emit_platform=emit_platform,
    emit_tables=emit_tables, emit_vm=emit_vm, emit_system=emit_system, needs=needs,
)
