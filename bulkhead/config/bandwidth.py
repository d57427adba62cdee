# SPDX-License-Identifier: Apache-2.0
"""Memory bandwidth reservation: the ``bandwidth:`` sections, their checks,
the budget arithmetic and the report of ``bulkhead check`` (docs/bandwidth.md).

- Platform file: ``bandwidth: {counter, events, sustainable_mbps, pmu_irq,
  counter_hz}`` -- the event model (event numbers, bytes per event and how
  trustworthy that is) and the DRAM bandwidth the platform sustains.
- VM: ``bandwidth: {period_us, budget_mbps | budget_events | read_*/write_*,
  weights, reclaim}`` and ``manager: true``; the system's: ``{spare_sharing}``.

The arithmetic mirrors ``hypervisor/isolation/bw_budget.c`` (which the hypervisor
uses at run time, e.g. for ``BH_HC_BW_SET``): events per period = floor(MB/s x
period_us / bytes_per_event), at least 1; a VM budget is split evenly (the remainder
going one event each to the first vCPUs) or by weights in percent (rounded down).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any, TextIO

from bulkhead.base import term
from bulkhead.base.csource import CSource, Field, hexa
from bulkhead.base.errors import Diagnostic
from bulkhead.config.bwspec import (
    BW_EVENT_NAMES,
    BwCounter,
    BwEventSpec,
    BwFallback,
    BwModel,
    CoreTypeBw,
    PlatformBandwidth,
    VmBandwidthSpec,
)
from bulkhead.config.mechanism import Keys, Mechanism, Need, SystemView, VmView
from bulkhead.config.model import Platform, Resolved, SystemSpec, VmSpec
from bulkhead.config.reader import Reader
from bulkhead.config.yamlpos import YList, YMap, YNode, describe

CORE_TYPE_RE = re.compile(r"[a-z][a-z0-9_-]{0,31}\Z")

# the same limits as BH_HC_BW_SET (isolation/bw_budget.h: BW_MAX_PERIOD_US, BW_MAX_BUDGET, which config.c
# asserts: MECHANISM.limits, and bw_settings_ok; regulator_events reaches the hypervisor in cfg_bw_system)
MAX_PERIOD_US = 1_000_000  # 1 s: keeps a period's events within the 32-bit counters
MAX_BUDGET_EVENTS = 0x7FFF_FFFF  # per period, VM or vCPU
MAX_MBPS = 1_000_000_000
CPU_CYCLES = 0x11  # the architectural PMU event
BW_MODELS: tuple[BwModel, ...] = ("exact", "pessimistic", "optimistic", "notional")

PLATFORM_KEYS = ("counter", "events", "sustainable_mbps", "pmu_irq", "counter_hz", "regulator_events",
                 "overflow_poll_us", "fallback", "core_types")
VM_KEYS = ("period_us", "budget_mbps", "budget_events", "read_mbps", "write_mbps", "read_events",
           "write_events", "weights", "reclaim", "counter", "model")
CORE_TYPE_KEYS = ("events", "max_mbps")
SYSTEM_KEYS = ("spare_sharing",)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


# --- arithmetic (mirrors bw_budget.c) --------------------------------------


def events_from_mbps(mbps: int, period_us: int, bytes_per_event: int) -> int:
    """Events per period: mbps x 10^6 B/s x period_us x 10^-6 s / bytes_per_event,
    rounded down, at least 1."""
    return max(mbps * period_us // bytes_per_event, 1)


def split(budget: int, n: int, weights: tuple[int, ...] | None) -> tuple[tuple[int, ...], int]:
    """(per-vCPU shares, events given to no vCPU). A share of 0 becomes 1."""
    if weights is None:
        shares = [budget // n + (1 if i < budget % n else 0) for i in range(n)]
    else:
        shares = [budget * w // 100 for w in weights]
    shares = [max(s, 1) for s in shares]
    return tuple(shares), max(budget - sum(shares), 0)


def mbps_of(events: int, period_us: int, bytes_per_event: int) -> float:
    """The bandwidth ``events`` per period stand for, in MB/s."""
    return events * bytes_per_event / period_us


# --- parsing (called by bulkhead.schema) ------------------------------------


def _parse_events(r: Reader, node: YNode, epath: str) -> tuple[BwEventSpec, ...]:
    em = r.mapping(node, epath, BW_EVENT_NAMES, (), "a mapping of events {read_write, read, write}")
    events = []
    for name in BW_EVENT_NAMES:
        if name not in em:
            continue
        q = _join(epath, name)
        e = r.mapping(em[name], q, ("number", "bytes_per_event", "model", "models"), ("number",),
                      "an event {number, bytes_per_event, model} or {number, models}")
        bpe_what = "a number of bytes per event (integer 1-4096)"
        models: list[tuple[BwModel, int]] = []
        if "models" in e:
            if "bytes_per_event" in e or "model" in e:
                raise r.fail(e["models"], _join(q, "models"), "give models, or bytes_per_event and model, not both")
            mm = r.mapping(e["models"], _join(q, "models"), BW_MODELS, (),
                           "a mapping of models to bytes per event, e.g. {pessimistic: 128, optimistic: 64}")
            if not mm:
                raise r.fail(e["models"], _join(q, "models"), "give at least one model")
            for key, vnode in mm.items():
                mname = next(x for x in BW_MODELS if x == key)
                models.append((mname, r.integer(vnode, _join(_join(q, "models"), key), bpe_what, 1, 4096)))
            model, nbytes = models[0]
        else:
            if "bytes_per_event" not in e:
                raise r.fail(em[name], q, "missing bytes_per_event (or models)")
            model = next(x for x in BW_MODELS if x == (r.choice(e["model"], _join(q, "model"), BW_MODELS)
                                                         if "model" in e else "exact"))
            nbytes = r.integer(e["bytes_per_event"], _join(q, "bytes_per_event"), bpe_what, 1, 4096)
        events.append(BwEventSpec(
            name=name,
            number=r.integer(e["number"], _join(q, "number"), "a PMU event number (integer 0-0xffff)", 0, 0xFFFF),
            bytes_per_event=nbytes,
            model=model,
            path=q,
            models=tuple(models),
        ))
    if not events:
        raise r.fail(node, epath, "at least one event is required (read_write, or read and write)")
    return tuple(events)


def _parse_core_types(r: Reader, node: YNode, path: str) -> tuple[CoreTypeBw, ...]:
    what = "a mapping of core types (as in the platform's cpus) to {events, max_mbps}"
    r.visit(node, path)
    if not isinstance(node, YMap):
        raise r.fail(node, path, f"expected {what}, got {describe(node)}")
    out: list[CoreTypeBw] = []
    for key, cnode in node.items:
        name = key.raw
        q = _join(path, name)
        if not CORE_TYPE_RE.match(name):
            raise r.fail(key, q, f"'{name}' is not a core type name (a-z, 0-9, _ and -, e.g. cortex-a55)")
        if any(ct.name == name for ct in out):
            raise r.fail(key, q, f"core type '{name}' is given twice")
        r.visit(cnode, q)
        c = r.mapping(cnode, q, CORE_TYPE_KEYS, ("events",), "a core type's {events, max_mbps}")
        out.append(CoreTypeBw(
            name=name,
            events=_parse_events(r, c["events"], _join(q, "events")),
            max_mbps=r.integer(c["max_mbps"], _join(q, "max_mbps"), f"a bandwidth in MB/s (integer 1-{MAX_MBPS})",
                               1, MAX_MBPS) if "max_mbps" in c else 0,
            path=q,
        ))
    if not out:
        raise r.fail(node, path, "give at least one core type")
    return tuple(out)


def _parse_platform_section(r: Reader, node: YNode, path: str = "bandwidth") -> PlatformBandwidth:
    m = r.mapping(node, path, PLATFORM_KEYS, ("counter", "sustainable_mbps", "pmu_irq"),
                  "a mapping {counter, events, core_types, sustainable_mbps, pmu_irq, counter_hz, "
                  "regulator_events, overflow_poll_us, fallback}")
    counter: BwCounter = "cycles" if r.choice(m["counter"], _join(path, "counter"),
                                              ("cycles", "event")) == "cycles" else "event"
    core_types = _parse_core_types(r, m["core_types"], _join(path, "core_types")) if "core_types" in m else ()
    if "events" in m:
        events = _parse_events(r, m["events"], _join(path, "events"))
    elif core_types:
        events = core_types[0].events
    else:
        raise r.fail(node, path, "missing events (or core_types: the events of each core type)")
    ppi, spis = _parse_pmu_irq(r, m["pmu_irq"], _join(path, "pmu_irq"))
    return PlatformBandwidth(
        counter=counter,
        events=events,
        sustainable_mbps=r.integer(m["sustainable_mbps"], _join(path, "sustainable_mbps"),
                                   f"a bandwidth in MB/s (integer 1-{MAX_MBPS})", 1, MAX_MBPS),
        pmu_irq=ppi,
        pmu_spis=spis,
        fallback=_parse_fallback(r, m["fallback"], _join(path, "fallback")) if "fallback" in m else None,
        counter_hz=r.integer(m["counter_hz"], _join(path, "counter_hz"),
                             "a frequency in Hz (integer 1000-10^10)", 1000, 10**10) if "counter_hz" in m else 0,
        regulator_events=r.integer(m["regulator_events"], _join(path, "regulator_events"),
                                   "a number of events (integer 0-10^6)", 0, 10**6)
        if "regulator_events" in m else 0,
        overflow_poll_us=r.integer(m["overflow_poll_us"], _join(path, "overflow_poll_us"),
                                   "a time in microseconds (integer 1-1000000)", 1, 1_000_000)
        if "overflow_poll_us" in m else 0,
        path=path,
        core_types=core_types,
    )


def _parse_pmu_irq(r: Reader, node: YNode, path: str) -> tuple[int, tuple[int, ...]]:
    """(PPI, ()) for one PPI shared by the CPUs, (0, SPIs) for one SPI per CPU."""
    if isinstance(node, YList):
        what = "an SPI (integer 32-1019)"
        spis = r.each(node, path, lambda n, q: r.integer(n, q, what, 32, 1019),
                      "a PPI (integer 16-31) or a list of one SPI per CPU")
        if not spis:
            raise r.fail(node, path, "expected a PPI (integer 16-31) or a list of one SPI per CPU, got an empty list")
        return 0, spis
    return r.integer(node, path, "a PPI (integer 16-31) or a list of one SPI per CPU", 16, 31), ()


def _parse_fallback(r: Reader, node: YNode, path: str) -> BwFallback:
    m = r.mapping(node, path, ("event", "overflow_poll_us"), ("event", "overflow_poll_us"),
                  "a mapping {event, overflow_poll_us}")
    return BwFallback(
        event=r.integer(m["event"], _join(path, "event"), "a PMU event number (integer 1-0x3f)", 1, 0x3F),
        overflow_poll_us=r.integer(m["overflow_poll_us"], _join(path, "overflow_poll_us"),
                                   "a time in microseconds (integer 1-1000000)", 1, 1_000_000),
        path=path,
    )


def _parse_vm_section(r: Reader, node: YNode, path: str) -> VmBandwidthSpec:
    m = r.mapping(node, path, VM_KEYS, ("period_us",), "a mapping {period_us, budget_mbps, ...}")

    def opt(key: str, what: str, hi: int) -> int | None:
        if key not in m:
            return None
        return r.integer(m[key], _join(path, key), f"{what} (integer 1-{hi})", 1, hi)

    mbps = "a bandwidth in MB/s"
    events = "a number of events per period"
    spec = VmBandwidthSpec(
        period_us=r.integer(m["period_us"], _join(path, "period_us"),
                            f"a period in microseconds (integer 1-{MAX_PERIOD_US})", 1, MAX_PERIOD_US),
        budget_mbps=opt("budget_mbps", mbps, MAX_MBPS),
        budget_events=opt("budget_events", events, MAX_BUDGET_EVENTS),
        read_mbps=opt("read_mbps", mbps, MAX_MBPS),
        write_mbps=opt("write_mbps", mbps, MAX_MBPS),
        read_events=opt("read_events", events, MAX_BUDGET_EVENTS),
        write_events=opt("write_events", events, MAX_BUDGET_EVENTS),
        weights=r.each(m["weights"], _join(path, "weights"),
                       lambda n, q: r.integer(n, q, "a weight in percent (integer 1-100)", 1, 100),
                       "a list of weights in percent") if "weights" in m else None,
        reclaim=r.boolean(m["reclaim"], _join(path, "reclaim")) if "reclaim" in m else False,
        path=path,
        counter=(("cycles" if r.choice(m["counter"], _join(path, "counter"), ("cycles", "event")) == "cycles"
                  else "event") if "counter" in m else None),
        model=next(x for x in BW_MODELS if x == r.choice(m["model"], _join(path, "model"), BW_MODELS))
        if "model" in m else None,
    )
    # exactly one budget form
    whole = [k for k in ("budget_mbps", "budget_events") if k in m]
    parts = [k for k in ("read_mbps", "read_events", "write_mbps", "write_events") if k in m]
    if len(whole) > 1:
        raise r.fail(m[whole[1]], _join(path, whole[1]), "give budget_mbps or budget_events, not both")
    if whole and parts:
        raise r.fail(m[parts[0]], _join(path, parts[0]),
                     f"give one budget: {whole[0]} for all traffic, or read and write budgets, not both")
    if not whole and not parts:
        raise r.fail(node, path, "missing a budget: give budget_mbps or budget_events "
                                 "(or read_mbps/write_mbps on platforms with separate read and write events)")
    for kind in ("read", "write"):
        given = [k for k in parts if k.startswith(kind + "_")]
        if parts and not given:
            raise r.fail(node, path, f"missing the {kind} budget: give {kind}_mbps or {kind}_events")
        if len(given) > 1:
            raise r.fail(m[given[1]], _join(path, given[1]), f"give {given[0]} or {given[1]}, not both")
    if spec.weights is not None and not spec.weights:
        raise r.fail(m["weights"], _join(path, "weights"), "an empty list of weights (omit it for an even split)")
    return spec


def _parse_system_section(r: Reader, node: YNode, path: str = "bandwidth") -> bool:
    """The system-level section; returns spare_sharing."""
    m = r.mapping(node, path, SYSTEM_KEYS, (), "a mapping {spare_sharing}")
    return r.boolean(m["spare_sharing"], _join(path, "spare_sharing")) if "spare_sharing" in m else False


# --- resolved budgets --------------------------------------------------------


@dataclass(frozen=True)
class Channel:
    """One counted event of a regulated VM."""

    event: BwEventSpec
    budget: int  # events per period for the VM
    shares: tuple[int, ...]  # per vCPU
    unshared: int  # given to no vCPU (weights below 100%)
    requested_mbps: int | None  # as written (None: given in events)
    vcpu_events: tuple[int, ...] = ()  # the PMU event each vCPU counts (its core type's); () : event.number
    vcpu_types: tuple[str, ...] = ()  # the core type of each vCPU's CPU ('' untyped)

    def number_of(self, vcpu: int) -> int:
        return self.vcpu_events[vcpu] if self.vcpu_events else self.event.number

    def mbps(self, period_us: int) -> float:
        return mbps_of(self.budget, period_us, self.event.bytes_per_event)

    def vcpu_mbps(self, period_us: int) -> tuple[float, ...]:
        return tuple(mbps_of(s, period_us, self.event.bytes_per_event) for s in self.shares)


@dataclass(frozen=True)
class VmBandwidth:
    """A VM's regulation as the hypervisor gets it (``struct cfg_bw``)."""

    vm: str
    period_us: int
    period_ticks: int  # at the platform's counter_hz (0 when unknown)
    cycles: bool  # regulated on the cycle counter
    channels: tuple[Channel, ...]
    weights: tuple[int, ...] | None
    reclaim: bool
    manager: bool
    model: str | None = None  # the VM's chosen bytes-per-event model (None: the defaults)

    @property
    def mbps(self) -> float:
        return sum(ch.mbps(self.period_us) for ch in self.channels)


def _channel_budgets(bw: VmBandwidthSpec, pb: PlatformBandwidth,
                     core_type: str = "") -> list[tuple[BwEventSpec, int, int | None]]:
    """(event, events per period, MB/s as written) per channel, as a CPU of
    ``core_type`` counts it under the VM's model; the platform must offer the
    events (checked)."""
    out: list[tuple[BwEventSpec, int, int | None]] = []
    forms: list[tuple[str, int | None, int | None]]
    if bw.budget_mbps is not None or bw.budget_events is not None:
        forms = [("read_write", bw.budget_mbps, bw.budget_events)]
    else:
        forms = [("read", bw.read_mbps, bw.read_events), ("write", bw.write_mbps, bw.write_events)]
    for name, mbps, events in forms:
        base = pb.event_of(name, core_type)
        assert base is not None
        ev = base.with_model(bw.model) or base
        n = events if events is not None else events_from_mbps(mbps or 0, bw.period_us, ev.bytes_per_event)
        out.append((ev, n, mbps))
    return out


def counter_of(bw: VmBandwidthSpec, pb: PlatformBandwidth) -> BwCounter:
    """The counter a VM is regulated on: its own choice, else the platform's."""
    return bw.counter or pb.counter


def vcpu_types(platform: Platform, vm: VmSpec) -> tuple[str, ...]:
    """The core type of each of the VM's CPUs ('' where the platform does not type them)."""
    return tuple(platform.cpu_type(c) if c < platform.ncpus else "" for c in vm.cpus)


def plan(platform: Platform, vm: VmSpec) -> VmBandwidth | None:
    """The resolved regulation of a checked VM; None when unregulated. The
    budget is in events of vCPU 0's core type (the checks make the bytes per
    event of every core type the VM spans equal); each vCPU counts its own
    core type's event."""
    bw, pb = vm.bandwidth, platform.bandwidth
    if bw is None or pb is None:
        return None
    types = vcpu_types(platform, vm)
    per_type = {t: _channel_budgets(bw, pb, t) for t in dict.fromkeys(types)}
    channels = []
    for k, (ev, budget, mbps) in enumerate(_channel_budgets(bw, pb, types[0] if types else "")):
        shares, unshared = split(budget, len(vm.cpus), bw.weights)
        numbers = tuple(per_type[t][k][0].number for t in types)
        channels.append(Channel(ev, budget, shares, unshared, mbps,
                                numbers if pb.core_types else (), types if pb.core_types else ()))
    return VmBandwidth(
        vm=vm.name,
        period_us=bw.period_us,
        period_ticks=bw.period_us * pb.counter_hz // 1_000_000,
        cycles=counter_of(bw, pb) == "cycles",
        channels=tuple(channels),
        weights=bw.weights,
        reclaim=bw.reclaim,
        manager=vm.manager,
        model=bw.model,
    )


# --- checks ---------------------------------------------------------------------


def check_platform(p: Platform) -> list[Diagnostic]:
    """Errors in the platform's ``bandwidth:`` section."""
    pb = p.bandwidth
    if pb is None:
        return []
    errors = []
    at = p.locs.diag
    if pb.event("read_write") is None and not pb.split:
        errors.append(at(_join(pb.path, "events"), "give a read_write event, or both read and write events"))
    if pb.counter == "cycles" and (pb.event("read") or pb.event("write")):
        errors.append(at(_join(pb.path, "events"), "counter: cycles regulates on one counter: "
                                                   "give only a read_write event"))
    reserved = {p.timer.hyp_irq: "timer.hyp_irq", p.timer.virt_irq: "timer.virt_irq",
                p.timer.phys_irq: "timer.phys_irq", p.timer.secure_irq: "timer.secure_irq",
                p.gic.maintenance_irq: "gic.maintenance_irq"}
    if pb.pmu_irq in reserved:
        errors.append(at(_join(pb.path, "pmu_irq"), f"PPI {pb.pmu_irq} is already {reserved[pb.pmu_irq]}"))
    if pb.pmu_spis:
        spis = {p.uart.irq: "uart.irq"}
        spis.update((irq, f"device {d.name}") for d in p.devices for irq in d.irqs)
        if len(pb.pmu_spis) != p.ncpus:
            errors.append(at(_join(pb.path, "pmu_irq"), f"{len(pb.pmu_spis)} SPIs for {p.ncpus} CPUs: "
                                                        "give one per CPU, in the order of cpus"))
        for i, irq in enumerate(pb.pmu_spis):
            if irq in pb.pmu_spis[:i]:
                errors.append(at(f"{_join(pb.path, 'pmu_irq')}[{i}]", f"SPI {irq} is given twice"))
            elif irq in spis:
                errors.append(at(f"{_join(pb.path, 'pmu_irq')}[{i}]", f"SPI {irq} is already {spis[irq]}"))
            elif irq >= 32 + p.gic.spis:
                errors.append(at(f"{_join(pb.path, 'pmu_irq')}[{i}]",
                                 f"SPI {irq} is beyond the GIC's {p.gic.spis} SPIs (INTIDs 32-{31 + p.gic.spis})"))
    if pb.fallback is not None and pb.counter != "event":
        errors.append(at(pb.fallback.path, "a fallback event needs counter: event"))
    if pb.core_types:
        ctpath = _join(pb.path, "core_types")
        if not p.cpu_types:
            errors.append(at(ctpath, "core_types need typed CPUs: give cpus as {mpidr, type}"))
        names = {ev.name for ev in pb.events}
        for ct in pb.core_types:
            if p.cpu_types and ct.name not in p.cpu_types:
                errors.append(at(ct.path, f"no CPU of the platform has core type '{ct.name}' "
                                          f"(cpus have: {', '.join(p.core_types)})"))
            if {ev.name for ev in ct.events} != names:
                errors.append(at(_join(ct.path, "events"), "every core type counts the same channels "
                                                           f"({', '.join(sorted(names))})"))
        for t in p.core_types:
            if pb.core_type(t) is None:
                errors.append(at(ctpath, f"core type '{t}' of cpus has no entry: give its events"))
    return errors


def check(s: SystemSpec) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """(errors, warnings) about the bandwidth regulation of ``s``."""
    errors: list[Diagnostic] = []
    warnings: list[Diagnostic] = []
    p = s.platform
    pb = p.bandwidth
    regulated = [vm for vm in s.vms if vm.bandwidth is not None]
    if pb is None:
        for vm in regulated:
            assert vm.bandwidth is not None
            errors.append(s.locs.diag(vm.bandwidth.path, f"platform '{p.name}' has no bandwidth model "
                                                         f"(add a 'bandwidth:' section to {p.display})"))
        return errors, warnings
    if s.spare_sharing and not regulated:
        warnings.append(s.locs.diag("bandwidth.spare_sharing", "spare sharing has no effect: no VM is regulated"))
    total = 0.0
    for vm in regulated:
        bw = vm.bandwidth
        assert bw is not None
        if not vm.cpus:
            continue  # validate reports "a VM needs at least one CPU" at the cpus key
        before = len(errors)
        _check_vm(s, vm, bw, pb, errors, warnings)
        if len(errors) == before:
            planned = plan(p, vm)
            assert planned is not None
            total += planned.mbps
    if regulated and total > pb.sustainable_mbps:
        warnings.append(s.locs.diag("vms", f"the guaranteed bandwidth budgets sum to {total:.0f} MB/s, "
                                           f"above the {pb.sustainable_mbps} MB/s platform '{p.name}' "
                                           "sustains: they cannot all be met"))
    return errors, warnings


def _check_vm(s: SystemSpec, vm: VmSpec, bw: VmBandwidthSpec, pb: PlatformBandwidth,
              errors: list[Diagnostic], warnings: list[Diagnostic]) -> None:
    at = s.locs.diag
    n = len(vm.cpus)
    p = s.platform
    whole = bw.budget_mbps is not None or bw.budget_events is not None
    if whole and pb.event("read_write") is None:
        key = "budget_mbps" if bw.budget_mbps is not None else "budget_events"
        errors.append(at(_join(bw.path, key), f"platform '{p.name}' counts reads and writes separately: "
                                              "give read_mbps and write_mbps (or read_events/write_events)"))
        return
    if not whole and not pb.split:
        key = next(k for k in ("read_mbps", "read_events", "write_mbps", "write_events")
                   if getattr(bw, k) is not None)
        errors.append(at(_join(bw.path, key), f"platform '{p.name}' has no separate read and write events: "
                                              "give budget_mbps or budget_events"))
        return
    if bw.counter == "cycles" and pb.split:
        errors.append(at(_join(bw.path, "counter"), f"platform '{p.name}' counts reads and writes on two "
                                                    "event counters: the cycle counter cannot regulate them"))
        return
    if bw.weights is not None:
        wpath = _join(bw.path, "weights")
        if len(bw.weights) != n:
            errors.append(at(wpath, f"{len(bw.weights)} weight{'s' if len(bw.weights) != 1 else ''} for "
                                    f"{n} vCPU{'s' if n != 1 else ''}: give one weight per vCPU"))
            return
        if sum(bw.weights) > 100:
            errors.append(at(wpath, f"the weights sum to {sum(bw.weights)}%; at most 100% of the "
                                    "VM's budget can be shared out"))
            return
    types = vcpu_types(p, vm)
    if bw.model is not None:
        for t in dict.fromkeys(types):
            for name in [e.name for e in pb.events]:
                base = pb.event_of(name, t)
                if base is not None and base.with_model(bw.model) is None:
                    errors.append(at(_join(bw.path, "model"), f"the {name} event of "
                                     f"{('core type ' + t) if t else 'the platform'} has no {bw.model} model "
                                     f"(it has: {', '.join(base.model_names)})"))
                    return
    by_type = {t: _channel_budgets(bw, pb, t) for t in dict.fromkeys(types)}
    if len(by_type) > 1:
        first_type, first = next(iter(by_type.items()))
        for t, chans in by_type.items():
            for (ev0, _, _), (ev, _, _) in zip(first, chans, strict=True):
                if ev.bytes_per_event != ev0.bytes_per_event:
                    errors.append(at(bw.path, f"the VM spans core types {first_type} and {t}, whose "
                                              f"{ev.name} events stand for {ev0.bytes_per_event} and "
                                              f"{ev.bytes_per_event} B under the {ev.model} model: one "
                                              "budget in events cannot mean the same bandwidth on both"))
                    return
    for k, (ev, budget, mbps) in enumerate(_channel_budgets(bw, pb, types[0] if types else "")):
        key = f"{ev.name}_" if ev.name != "read_write" else "budget_"
        key += "mbps" if mbps is not None else "events"
        kpath = _join(bw.path, key)
        if mbps is not None and mbps * bw.period_us < ev.bytes_per_event:
            warnings.append(at(kpath, f"{mbps} MB/s is less than one {ev.bytes_per_event}-byte event per "
                                      f"{bw.period_us} us period; the budget is 1 event per period"))
        if budget > MAX_BUDGET_EVENTS:
            errors.append(at(kpath, f"{budget} events per period is more than the counter can take "
                                    f"({MAX_BUDGET_EVENTS}): use a shorter period or a smaller budget"))
            continue
        shares, _ = split(budget, n, bw.weights)
        for i, (share, t) in enumerate(zip(shares, types, strict=True)):
            ct = pb.core_type(t)
            share_mbps = mbps_of(share, bw.period_us, by_type[t][k][0].bytes_per_event)
            if ct is not None and ct.max_mbps and share_mbps > ct.max_mbps:
                errors.append(at(kpath, f"vCPU {i} (CPU {vm.cpus[i]}, {t}) would be granted "
                                        f"{_fmt_mbps(share_mbps)} MB/s under the {by_type[t][k][0].model} "
                                        f"model, above the {ct.max_mbps} MB/s limit of core type {t} "
                                        f"({_join(ct.path, 'max_mbps')} in {p.display})"))
                break
        smallest = min(budget * w // 100 for w in bw.weights) if bw.weights else budget // n
        if pb.regulator_events and 0 < smallest < pb.regulator_events:
            errors.append(at(kpath, f"the smallest vCPU share ({smallest} events per period) is less than "
                                    f"the regulator's own cost on platform '{p.name}' (about "
                                    f"{pb.regulator_events} events per period, charged to the vCPU): the "
                                    f"vCPU would be starved; give each vCPU at least {pb.regulator_events} "
                                    "events per period"))
        elif pb.regulator_events and 0 < smallest < 2 * pb.regulator_events:
            warnings.append(at(kpath, f"the smallest vCPU share ({smallest} events per period) is less than "
                                      f"twice the regulator's own cost on platform '{p.name}' (about "
                                      f"{pb.regulator_events} events per period, charged to the vCPU): "
                                      "the vCPU may make little or no progress"))
        if bw.weights is None:
            if budget < n:
                errors.append(at(kpath, f"a budget of {budget} event{'s' if budget != 1 else ''} per period "
                                        f"is less than one per vCPU ({n} vCPUs)"))
        else:
            for i, w in enumerate(bw.weights):
                if budget * w // 100 < 1:
                    errors.append(at(_join(bw.path, f"weights[{i}]"),
                                     f"vCPU {i}'s share ({w}% of {budget} events) rounds to 0 events per "
                                     "period"))
    if bw.reclaim and n == 1:
        warnings.append(at(_join(bw.path, "reclaim"), "reclaim has no effect on a VM with one vCPU"))


def starved_under_icount(system: Resolved, shift: int) -> list[str]:
    """Regulated VMs that would starve under ``-icount shift``: QEMU's cycle
    counter and CPU_CYCLES event count 2^shift per instruction (one per
    nanosecond of virtual time), so the regulator's own
    per-period cost (``regulator_events``, measured at shift 0) is 2^shift
    times larger in counted events. One message per VM whose smallest share
    is below that."""
    pb = system.platform.bandwidth
    if pb is None or not pb.regulator_events or shift <= 0:
        return []
    cost = pb.regulator_events << shift
    out = []
    for vm in system.spec.vms:
        planned = plan(system.platform, vm)
        if planned is None or not (planned.cycles or all(ch.event.number == CPU_CYCLES for ch in planned.channels)):
            continue  # an event that does not count time (e.g. INST_RETIRED): the shift does not scale it
        smallest = min(min(ch.shares) for ch in planned.channels)
        if smallest < cost:
            out.append(f"vm {vm.name}: a vCPU share of {smallest} cycles per period is less than the "
                       f"regulator's own cost at -icount shift={shift} ({pb.regulator_events} x 2^{shift} = "
                       f"{cost} cycles): the vCPU would be starved; raise the budget or lower --icount")
    return out


# --- reporting ----------------------------------------------------------------------


EVENT_NAMES = {0x08: "INST_RETIRED", 0x11: "CPU_CYCLES", 0x17: "L2D_CACHE_REFILL", 0x18: "L2D_CACHE_WB",
               0x19: "BUS_ACCESS", 0x29: "L3D_CACHE_ALLOCATE", 0x2A: "L3D_CACHE_REFILL", 0x2B: "L3D_CACHE",
               0x50: "L2D_CACHE_RD", 0x51: "L2D_CACHE_WR"}  # Arm ARM common events (D17.11)


def event_name(number: int) -> str:
    return EVENT_NAMES.get(number, "")


def _event_text(ev: BwEventSpec) -> str:
    models = ev.models or ((ev.model, ev.bytes_per_event),)
    name = event_name(ev.number)
    return (f"{ev.name} 0x{ev.number:x}{' ' + name if name else ''} x "
            + " | ".join(f"{b} B ({m})" for m, b in models))


def _fmt_mbps(x: float) -> str:
    return f"{x:.0f}" if x >= 100 else f"{x:.3g}"


BW_HEAD = ("VM", "VCPU", "PERIOD", "EVENT", "EVENTS/PERIOD", "MB/S", "WEIGHT", "OPTIONS")


def regulated(system: Resolved) -> bool:
    """Whether any VM of the system has a bandwidth regulator."""
    p = system.platform
    return p.bandwidth is not None and any(plan(p, vm) is not None for vm in system.spec.vms)


def report_parts(system: Resolved) -> tuple[list[str], list[tuple[str, ...]], list[str]] | None:
    """The bandwidth part of ``bulkhead check`` as (lines before the table,
    its rows under BW_HEAD, lines after it); None when no VM is regulated."""
    p = system.platform
    pb = p.bandwidth
    plans = [pl for pl in (plan(p, vm) for vm in system.spec.vms) if pl is not None]
    if pb is None or not plans:
        return None
    counter = "cycle counter (PMCCNTR)" if pb.counter == "cycles" else "event counters"
    if pb.core_types:
        before = ["", f"bandwidth: {counter}; events per core type:"]
        for ct in pb.core_types:
            before.append(f"  {ct.name}: " + ", ".join(_event_text(ev) for ev in ct.events)
                          + (f"; at most {ct.max_mbps} MB/s per core" if ct.max_mbps else ""))
    else:
        before = ["", f"bandwidth: {counter}; events: {', '.join(_event_text(ev) for ev in pb.events)}"]
    if pb.fallback is not None:
        before.append(f"  on a CPU without them (QEMU): event 0x{pb.fallback.event:x} instead, the overflow "
                      f"looked for every {pb.fallback.overflow_poll_us} us")
    rows: list[tuple[str, ...]] = []
    for pl in plans:
        own = pl.cycles != (pb.counter == "cycles")  # the VM chose the other counter
        opts = ",".join(o for o, on in (("reclaim", pl.reclaim), ("manager", pl.manager),
                                        ("cycles" if pl.cycles else "event-counter", own)) if on) or "-"
        for ch in pl.channels:
            label = ch.event.name + (f" ({ch.event.model})" if len(ch.event.model_names) > 1 or pb.core_types
                                     else "")
            rows.append((pl.vm, "all", f"{pl.period_us} us", label, str(ch.budget),
                         _fmt_mbps(ch.mbps(pl.period_us)), "100%" if pl.weights is None else
                         f"{sum(pl.weights)}%", opts))
            for i, (share, mb) in enumerate(zip(ch.shares, ch.vcpu_mbps(pl.period_us), strict=True)):
                w = "even" if pl.weights is None else f"{pl.weights[i]}%"
                ev = (f"0x{ch.number_of(i):x} {event_name(ch.number_of(i))} {ch.vcpu_types[i]}".rstrip()
                      if ch.vcpu_types else "")
                rows.append(("", str(i), "", ev, str(share), _fmt_mbps(mb), w, ""))
    total = sum(pl.mbps for pl in plans)
    flag = "  (OVER: not every budget can be met)" if total > pb.sustainable_mbps else ""
    after = [f"guaranteed total: {_fmt_mbps(total)} MB/s of {pb.sustainable_mbps} MB/s sustainable{flag}"]
    managers = [vm.name for vm in system.spec.vms if vm.manager]
    if managers:
        after.append(f"managers: {', '.join(managers)} (may change budgets at run time: BH_HC_BW_SET)")
    if system.spec.spare_sharing:
        after.append("spare sharing: on (once every regulated vCPU is throttled, all run until their period ends)")
    if pb.counter == "cycles":
        after.append("note: this platform regulates on cycles; one 'event' is one CPU cycle (notional MB/s)")
    return before, rows, after


def report(system: Resolved) -> str:
    """The bandwidth part of ``bulkhead check`` as plain text ('' when no VM
    is regulated): one block per regulated VM, then the total against the
    sustainable bandwidth."""
    parts = report_parts(system)
    if parts is None:
        return ""
    before, rows, after = parts
    table = [BW_HEAD, *rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(BW_HEAD))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)).rstrip() for r in table]
    return "\n".join([*before, *lines, *after]) + "\n"


def print_report(system: Resolved, stream: TextIO) -> None:
    """The same on a terminal, the table drawn by rich."""
    parts = report_parts(system)
    if parts is None:
        return
    before, rows, after = parts
    stream.write("\n".join(before) + "\n")
    term.print_table(stream, BW_HEAD, rows, right=(4, 5))
    stream.write("\n".join(after) + "\n")


def document(system: Resolved, vm_name: str) -> dict[str, Any] | None:
    """A VM's regulation for ``bulkhead check --json`` (None: unregulated)."""
    vm = system.spec.vm(vm_name)
    pl = plan(system.platform, vm) if vm is not None else None
    if pl is None:
        return None
    return {
        "period_us": pl.period_us,
        "period_ticks": pl.period_ticks,
        "counter": "cycles" if pl.cycles else "event",
        "reclaim": pl.reclaim,
        "weights": None if pl.weights is None else list(pl.weights),
        "mbps": pl.mbps,
        "model": pl.channels[0].event.model if pl.channels else None,
        "events": [
            {"name": ch.event.name, "number": ch.event.number, "bytes_per_event": ch.event.bytes_per_event,
             "vcpu_events": [ch.number_of(i) for i in range(len(ch.shares))],
             "vcpu_core_types": list(ch.vcpu_types),
             "budget": ch.budget, "vcpu_budgets": list(ch.shares), "unshared": ch.unshared,
             "mbps": ch.mbps(pl.period_us), "vcpu_mbps": list(ch.vcpu_mbps(pl.period_us))}
            for ch in pl.channels
        ],
    }


# --- parse, config.c, features -------------------------------------------


def parse_platform(r: Reader, top: Keys, p: Platform) -> Platform:
    return dataclasses.replace(p, bandwidth=_parse_platform_section(r, top["bandwidth"])) if "bandwidth" in top else p


def parse_system(r: Reader, top: Keys, s: SystemSpec) -> SystemSpec:
    return dataclasses.replace(s, spare_sharing=_parse_system_section(r, top["bandwidth"])) if "bandwidth" in top \
        else s


def parse_vm(r: Reader, m: Keys, vm: VmSpec, p: Platform) -> VmSpec:
    if "bandwidth" not in m:
        return vm
    return dataclasses.replace(vm, bandwidth=_parse_vm_section(r, m["bandwidth"], f"{vm.path}.bandwidth"))


def emit_vm(out: CSource, system: SystemView, vm: VmView) -> list[Field]:
    """A regulated VM's struct cfg_bw; its cfg_vm member ``bw``."""
    pl = plan(system.platform, vm.spec)
    if pl is None:
        return []
    pre = f"vm{vm.index}_bw"
    out.array(f"static const u32 {pre}_budget", [f"\t{', '.join(str(s) for ch in pl.channels for s in ch.shares)},\n"])
    if pl.weights is not None:
        out.array(f"static const u32 {pre}_weights", [f"\t{', '.join(str(x) for x in pl.weights)},\n"])
    typed = any(ch.vcpu_events for ch in pl.channels)
    if typed:
        numbers = [hexa(ch.number_of(i)) for ch in pl.channels for i in range(len(ch.shares))]
        out.array(f"static const u32 {pre}_event", [f"\t{', '.join(numbers)},\n"])
    flags = [f for f, on in (("CFG_BW_CYCLES", pl.cycles), ("CFG_BW_RECLAIM", pl.reclaim)) if on]
    out.line(f"static const struct cfg_bw {pre} = {{")
    for key, value in (
        ("period_us", str(pl.period_us)), ("period_ticks", str(pl.period_ticks)), ("flags", " | ".join(flags) or "0"),
        ("nevents", str(len(pl.channels))),
        ("event", "{ " + ", ".join(hexa(ch.event.number) for ch in pl.channels) + " }"),
        ("budget", "{ " + ", ".join(str(ch.budget) for ch in pl.channels) + " }"),
        ("vcpu_budget", f"{pre}_budget"), ("weights", f"{pre}_weights" if pl.weights is not None else "NULL"),
        *([("vcpu_event", f"{pre}_event")] if typed else []),
    ):
        out.line(f"\t.{key} = {value},")
    out.line("};")
    return [("bw", f"&{pre}")]


def emit_system(out: CSource, system: SystemView) -> list[Field]:
    """struct cfg_bw_system when any VM is regulated; cfg_system's ``bw``."""
    pb = system.platform.bandwidth
    if pb is None or not any(vm.spec.bandwidth is not None for vm in system.vms):
        return []
    out.line()
    out.line("static const struct cfg_bw_system bw_system = {")
    out.line(f"\t.flags = {'CFG_BW_SPARE_SHARING' if system.spec.spare_sharing else '0'},")
    if pb.overflow_poll_us:
        out.line(f"\t.overflow_poll_us = {pb.overflow_poll_us},")
    if pb.fallback is not None:
        out.line(f"\t.fallback_event = {hexa(pb.fallback.event)},")
        out.line(f"\t.fallback_poll_us = {pb.fallback.overflow_poll_us},")
    out.line(f"\t.counter_hz = {pb.counter_hz},")
    if pb.regulator_events:
        out.line(f"\t.regulator_events = {pb.regulator_events},")
    out.line("};")
    return [("bw", "&bw_system")]


def needs(system: SystemView) -> list[Need]:
    p = system.platform
    return [Need("BW", f"vm {vm.name}", "is regulated (bandwidth)")
            for vm in system.spec.vms if p.bandwidth is not None and plan(p, vm) is not None]


MECHANISM = Mechanism(
    name="bandwidth", rank=40, docs="docs/bandwidth.md", features={"BW": ("isolation/bw*.c",)},
    platform_keys=("bandwidth",), system_keys=("bandwidth",), vm_keys=("bandwidth",), region_keys=(), device_keys=(),
    parse_platform=parse_platform, parse_system=parse_system, parse_vm=parse_vm, parse_region=None,
    check_device=None, parse_device=None, check_platform=check_platform, check=check, ipa_items=None,
    limits=(("BW_MAX_PERIOD_US", "isolation/bw_budget.h", MAX_PERIOD_US, "bulkhead.config.bandwidth.MAX_PERIOD_US"),
            ("BW_MAX_BUDGET", "isolation/bw_budget.h", MAX_BUDGET_EVENTS, "bulkhead.config.bandwidth.MAX_BUDGET_EVENTS")),
    emit_platform=lambda out, p: [("pmu_spi", "{ " + ", ".join(map(str, p.bandwidth.pmu_spis)) + " }")]
    if p.bandwidth is not None and p.bandwidth.pmu_spis else [],  # each CPU's PMU overflow SPI
    reserved_ram=None, guest_params=None, emit_tables=None, emit_vm=emit_vm, emit_system=emit_system, needs=needs,
)
