# SPDX-License-Identifier: Apache-2.0
"""The registry of mechanisms (:mod:`bulkhead.config.mechanism`): the one
place that names them. Every stage runs their hooks in this order (errors
are sorted by position; warnings, C tables and struct members come in this
order): page coloring, shared I/O, PCI, memory bandwidth, QoS-400, DMA
isolation, interrupt delivery, DSU L3 ways. Adding a mechanism is adding
its module and its line here."""

from __future__ import annotations

from bulkhead.config import bandwidth, coloring, dma, dsu, interrupts, pci, qos, shared_io
from bulkhead.config.mechanism import Mechanism

MECHANISMS: tuple[Mechanism, ...] = (
    coloring.MECHANISM,
    shared_io.MECHANISM,
    pci.MECHANISM,
    bandwidth.MECHANISM,
    qos.MECHANISM,
    dma.MECHANISM,
    interrupts.MECHANISM,
    dsu.MECHANISM,
)


def features() -> tuple[str, ...]:
    """Every feature some mechanism decides, in registry order."""
    return tuple(f for m in MECHANISMS for f in m.features)
