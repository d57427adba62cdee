# SPDX-License-Identifier: Apache-2.0
"""Typed description of the memory-bandwidth regulator's sections (docs/bandwidth.md):
the platform's event model and a VM's budget, as :mod:`bulkhead.config.bandwidth`
parses them. Part of the config model (:mod:`bulkhead.config.model`), which
refers to these from ``Platform`` and ``VmSpec``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

BwCounter = Literal["cycles", "event"]
BwModel = Literal["exact", "pessimistic", "optimistic", "notional"]
BW_EVENT_NAMES = ("read_write", "read", "write")


@dataclass(frozen=True)
class BwEventSpec:
    """A PMU event the regulator counts (platform ``bandwidth.events``)."""

    name: str  # read_write | read | write
    number: int
    bytes_per_event: int
    model: BwModel
    path: str  # bandwidth.events.<name>
    # every (model, bytes per event) the platform offers for this event, the
    # default first (``models: {pessimistic: 128, optimistic: 64}``); a VM
    # picks one with its ``bandwidth.model``
    models: tuple[tuple[BwModel, int], ...] = ()

    def with_model(self, model: str | None) -> BwEventSpec | None:
        """This event under ``model`` (None: the default); None if not offered."""
        if model is None or model == self.model:
            return self
        for m, nbytes in self.models:
            if m == model:
                return BwEventSpec(self.name, self.number, nbytes, m, self.path, self.models)
        return None

    @property
    def model_names(self) -> tuple[str, ...]:
        return tuple(m for m, _ in self.models) or (self.model,)


@dataclass(frozen=True)
class CoreTypeBw:
    """``bandwidth.core_types.<type>``: the events a core type counts (a
    DynamIQ cluster mixes core types with different PMU events)."""

    name: str  # the core type of platform ``cpus`` (e.g. cortex-a55)
    events: tuple[BwEventSpec, ...]
    max_mbps: int  # the most one core of this type may be granted; 0: no limit
    path: str  # bandwidth.core_types.<name>

    def event(self, name: str) -> BwEventSpec | None:
        return next((ev for ev in self.events if ev.name == name), None)


GUEST_PMU_PPI = 23  # the PMU PPI of the guest platform (QEMU virt's), where the board's are SPIs


@dataclass(frozen=True)
class BwFallback:
    """``bandwidth.fallback``: the event the regulator counts instead when the
    CPU does not implement the platform's (PMCEID_EL0: QEMU implements none of
    the Cortex-A53's memory events), and the looks that find its overflow
    where the PMU interrupt is not wired (QEMU's xlnx-zcu102)."""

    event: int
    overflow_poll_us: int
    path: str


@dataclass(frozen=True)
class PlatformBandwidth:
    """The platform's memory-bandwidth model (``bandwidth:``; docs/bandwidth.md)."""

    counter: BwCounter  # cycles: PMCCNTR (QEMU); event: an event counter
    events: tuple[BwEventSpec, ...]
    sustainable_mbps: int
    pmu_irq: int  # the PMU overflow PPI; 0 when the platform has one SPI per CPU (pmu_spis)
    counter_hz: int  # generic-timer frequency; 0: unknown (the hypervisor reads CNTFRQ)
    regulator_events: int = 0  # events the regulator itself charges per period; 0: unknown
    overflow_poll_us: int = 0  # event counters: the regulator also looks every this many us; 0: never
    path: str = "bandwidth"
    pmu_spis: tuple[int, ...] = ()  # the PMU overflow SPI of each CPU (ZynqMP); () with a PPI
    fallback: BwFallback | None = None  # what a CPU without the events counts (QEMU)
    # per core type events (heterogeneous CPUs); ``events`` is then the first
    # type's, what a CPU without a listed type counts
    core_types: tuple[CoreTypeBw, ...] = ()

    def event(self, name: str) -> BwEventSpec | None:
        for ev in self.events:
            if ev.name == name:
                return ev
        return None

    def core_type(self, name: str) -> CoreTypeBw | None:
        return next((ct for ct in self.core_types if ct.name == name), None)

    def event_of(self, name: str, core_type: str) -> BwEventSpec | None:
        """Event ``name`` as a CPU of ``core_type`` counts it."""
        ct = self.core_type(core_type)
        return ct.event(name) if ct is not None else self.event(name)

    @property
    def split(self) -> bool:
        """Separate read and write events."""
        return self.event("read") is not None and self.event("write") is not None


@dataclass(frozen=True)
class VmBandwidthSpec:
    """A VM's ``bandwidth:`` as written: one budget form (MB/s or raw events
    per period, for the VM, or read and write separately)."""

    period_us: int
    budget_mbps: int | None
    budget_events: int | None
    read_mbps: int | None
    write_mbps: int | None
    read_events: int | None
    write_events: int | None
    weights: tuple[int, ...] | None
    reclaim: bool
    path: str  # vms[i].bandwidth
    counter: BwCounter | None = None  # overrides the platform's counter; None: the platform's
    model: BwModel | None = None  # the bytes-per-event model (None: each event's default)
