# SPDX-License-Identifier: Apache-2.0
"""DMA isolation through the platform's SMMUs (docs/dma.md).

- Platform file: ``smmus: [{name, type: smmuv3 | smmu-500, base, size, irqs:
  {event, gerror}, pcie, sources}]``, and on each DMA-capable device its
  ``stream_ids`` (from the Linux device tree's ``iommus`` / ``iommu-map``)
  and, when the platform has several SMMUs, ``smmu: <name>``.
- VM: a passthrough device entry ``{name, on_dma_fault: abort-device | stop-vm}``
  and a ``pci:`` entry's ``on_dma_fault`` (:func:`parse_fault_policy`).
- System: ``dma_isolation: none`` leaves the SMMUs off (devices then reach all
  of physical memory, as without an SMMU).

The **DMA stream table** is what the hypervisor programs: one
:class:`DmaStream` per (SMMU, stream ID), owned by one VM. The toolchain
builds it from the platform devices' stream IDs and from every registered
*stream source* (:func:`register_stream_source`): the hook through which PCI
passthrough adds its functions (StreamID = requester ID = bus << 8 | devfn).
:mod:`bulkhead.generate.gen_c` turns it into ``struct iommu_stream`` rows in
``config.c`` (hypervisor/drivers/iommu.h).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from bulkhead.base.csource import CSource, Field, cstr, hexa, struct_rows
from bulkhead.base.errors import Diagnostic
from bulkhead.config.mechanism import AddToVm, Keys, Mechanism, Need, SystemView, VmView
from bulkhead.config.model import PAGE, Platform, Range, SmmuSpec, SystemSpec
from bulkhead.config.reader import Reader, join
from bulkhead.config.yamlpos import YMap, YNode
from bulkhead.drivers import iommu

FAULT_POLICIES = ("abort-device", "stop-vm")
DEFAULT_POLICY = "abort-device"
FAULT_KEY = "on_dma_fault"  # a device's or PCI function's DMA fault policy
STAGE2_FAULT_KEY = "on_fault"  # a VM's stage-2 fault policy (inject | stop): not this one
MAX_STREAMS = 64  # IOMMU_MAX_STREAMS in hypervisor/drivers/iommu.h
MAX_SMMUS = 4  # IOMMU_MAX_UNITS
# the tables each SMMU needs are its driver's (bulkhead/drivers/iommu/)


@dataclass(frozen=True)
class DmaStream:
    """One stream the SMMU translates through ``vm``'s stage 2.

    ``device`` names it in messages (a platform device, or a PCI function as
    the PCI code names it, e.g. ``edu@00:02.0``); ``path`` is the config key
    path errors about it point at (e.g. ``vms[1].devices[0]``).
    """

    smmu: str  # smmus[].name
    sid: int
    vm: str
    device: str
    on_fault: str  # "abort-device" | "stop-vm"
    path: str


StreamSource = Callable[[SystemSpec], Iterable[DmaStream]]
_SOURCES: list[StreamSource] = []


def register_stream_source(source: StreamSource) -> None:
    """Adds a producer of DMA streams (the PCI hook, docs/dma.md).

    ``source(spec)`` is called for every checked system config (``check``,
    ``build``) with SMMUs on, and returns the streams of the functions its
    VMs own; they join the platform devices' streams in the generated table
    and are checked like them (unknown SMMU, stream ID twice, too many). A
    source must be registered at import of its module, and that module be
    imported by :mod:`bulkhead.config.validate`. Registering twice is a no-op.
    """
    if source not in _SOURCES:
        _SOURCES.append(source)


def parse_fault_policy(r: Reader, node: YMap, path: str) -> str | None:
    """The DMA fault policy of a device entry or ``pci:`` entry ``node``
    (``on_dma_fault``; docs/dma.md "Faults"), None when not given. The VM's
    ``on_fault`` key there (once this key's spelling) is refused by name."""
    for key, _ in node.items:
        if key.raw == STAGE2_FAULT_KEY:
            raise r.fail(key, join(path, key.raw), (
                f"'{STAGE2_FAULT_KEY}' is a VM's stage-2 fault policy (inject | stop); a device's DMA fault "
                f"policy is '{FAULT_KEY}' ({' | '.join(FAULT_POLICIES)})"))
    for key, value in node.items:
        if key.raw == FAULT_KEY:
            return r.choice(value, join(path, FAULT_KEY), FAULT_POLICIES)
    return None


def check_device(r: Reader, node: YMap, path: str) -> None:
    """A VM's device entry ``node`` before its keys are checked: its
    ``on_dma_fault`` value, and the VM's ``on_fault`` refused by name."""
    parse_fault_policy(r, node, path)


def parse_device(r: Reader, m: Keys, name: str, path: str) -> AddToVm:
    """Device ``name``'s ``on_dma_fault``: the VM's DMA fault policy for it."""
    if FAULT_KEY not in m:
        return lambda vm: vm
    entry = (name, r.choice(m[FAULT_KEY], join(path, FAULT_KEY), FAULT_POLICIES), join(path, FAULT_KEY))
    return lambda vm: dataclasses.replace(vm, dma_on_fault=(*vm.dma_on_fault, entry))


def enabled(s: SystemSpec) -> bool:
    """Whether the hypervisor drives the platform's SMMUs for this config."""
    return bool(s.platform.smmus) and s.dma_isolation != "none"


def policy_of(s: SystemSpec, vm_name: str, device: str) -> str:
    vm = s.vm(vm_name)
    if vm is not None:
        for dev, pol, _ in vm.dma_on_fault:
            if dev == device:
                return pol
    return DEFAULT_POLICY


def pcie_smmu(p: Platform) -> SmmuSpec | None:
    """The SMMU the PCIe root complex is behind (``pcie: true``), for the PCI hook."""
    return next((u for u in p.smmus if u.pcie), None)


def platform_streams(s: SystemSpec) -> list[DmaStream]:
    """The streams of the VMs' passthrough platform devices."""
    p = s.platform
    out: list[DmaStream] = []
    for vm in s.vms:
        for i, name in enumerate(vm.devices):
            dev = p.device(name)
            unit = p.smmu_of(dev) if dev is not None else None
            if dev is None or unit is None or name in vm.devices[:i]:
                continue
            pol = policy_of(s, vm.name, name)
            out += [DmaStream(unit.name, sid, vm.name, name, pol, f"{vm.path}.devices[{i}]") for sid in dev.stream_ids]
    return out


def streams(s: SystemSpec) -> list[DmaStream]:
    """The DMA stream table of ``s`` (empty with the SMMUs off)."""
    if not enabled(s):
        return []
    out = platform_streams(s)
    for source in _SOURCES:
        out += list(source(s))
    return out


def unconfined_vms(s: SystemSpec) -> list[str]:
    """The VMs that drive a DMA-capable device no SMMU confines (``dma_isolation:
    none``): the hypervisor refuses to recolor them (their device would keep
    writing to the old frames)."""
    p = s.platform
    out = []
    for vm in s.vms:
        if vm.pci and not (enabled(s) and pcie_smmu(p) is not None):
            out.append(vm.name)  # PCI functions are bus masters (docs/pci.md)
            continue
        for name in vm.devices:
            dev = p.device(name)
            if dev is not None and dev.dma and not (enabled(s) and p.smmu_of(dev) is not None):
                out.append(vm.name)
                break
    return out


def driven(s: SystemSpec) -> list[SmmuSpec]:
    """The SMMUs the hypervisor programs for ``s``: none with the SMMUs off;
    else those marked ``enable: always`` and those a VM owns a stream on."""
    if not enabled(s):
        return []
    used = {st.smmu for st in streams(s)}
    return [u for u in s.platform.smmus if u.enable == "always" or u.name in used]


# --- checks -------------------------------------------------------------------------


def check_platform(p: Platform) -> list[Diagnostic]:
    """Errors in the platform's ``smmus:`` and the devices' stream IDs."""
    errors: list[Diagnostic] = []
    at = p.locs.diag
    names: dict[str, str] = {}
    spis = p.gic.spi_range
    if len(p.smmus) > MAX_SMMUS:
        errors.append(at("smmus", f"{len(p.smmus)} SMMUs: the hypervisor drives at most {MAX_SMMUS}"))
    for u in p.smmus:
        if u.name in names:
            errors.append(at(f"{u.path}.name", f"duplicate SMMU name '{u.name}' (also {names[u.name]})"))
        names.setdefault(u.name, u.path)
        if u.base % PAGE:
            errors.append(at(f"{u.path}.base", f"base 0x{u.base:x} is not 4 KiB aligned"))
        if not p.mmio.contains(u.range):
            errors.append(at(u.path, f"SMMU '{u.name}' ({u.range}) is not inside the MMIO window ({p.mmio})"))
        need = iommu.of_type(u.type).window
        if u.size < need:
            errors.append(at(f"{u.path}.size", f"an {u.type} has at least 0x{need:x} bytes of registers, "
                                               f"got 0x{u.size:x}"))
        for dev in p.devices:
            if dev.range.overlaps(u.range):
                errors.append(at(dev.path, f"device '{dev.name}' ({dev.range}) overlaps SMMU '{u.name}' ({u.range}): "
                                           "the SMMU is the hypervisor's"))
        if Range(p.uart.base, PAGE).overlaps(u.range):
            errors.append(at(u.path, f"SMMU '{u.name}' ({u.range}) overlaps the UART"))
        for key, irq in (("event", u.event_irq), ("gerror", u.gerror_irq)):
            if irq not in spis:
                errors.append(at(f"{u.path}.irqs.{key}", f"IRQ {irq} is outside the SPI range "
                                                         f"{spis.start}-{spis.stop - 1}"))
            for dev in p.devices:
                if irq in dev.irqs:
                    errors.append(at(f"{u.path}.irqs.{key}", f"IRQ {irq} is also device '{dev.name}''s"))
        if u.pcie and not iommu.of_type(u.type).pcie:
            errors.append(at(f"{u.path}.pcie", f"type {u.type} is not modelled with the PCIe root complex behind it "
                                               f"({', '.join(d.name for d in iommu.all_drivers() if d.pcie)} is)"))
    owner: dict[tuple[str, int], str] = {}
    for dev in p.devices:
        if dev.smmu is not None and p.smmu_named(dev.smmu) is None:
            known = ", ".join(u.name for u in p.smmus) or "none"
            errors.append(at(f"{dev.path}.smmu", f"unknown SMMU '{dev.smmu}'; the platform has: {known}"))
            continue
        if not dev.stream_ids:
            if dev.smmu is not None:
                errors.append(at(f"{dev.path}.smmu", f"device '{dev.name}' names an SMMU but no stream_ids"))
            continue
        if not dev.dma:
            errors.append(at(f"{dev.path}.stream_ids", f"device '{dev.name}' has stream IDs but is not marked "
                                                       "'dma: true'"))
        unit = p.smmu_named(dev.smmu)
        if unit is None:
            errors.append(at(f"{dev.path}.stream_ids",
                             f"device '{dev.name}' has stream IDs but the platform has "
                             + ("no SMMU (add 'smmus:')" if not p.smmus else "several SMMUs: name one with 'smmu:'")))
            continue
        for k, sid in enumerate(dev.stream_ids):
            q = f"{dev.path}.stream_ids[{k}]"
            if sid >> unit.sid_bits:
                errors.append(at(q, f"stream ID 0x{sid:x} does not fit the {unit.sid_bits}-bit stream IDs of "
                                    f"{unit.type} '{unit.name}'"))
            if (unit.name, sid) in owner:
                errors.append(at(q, f"stream ID 0x{sid:x} of SMMU '{unit.name}' is also device "
                                    f"'{owner[(unit.name, sid)]}''s"))
            owner.setdefault((unit.name, sid), dev.name)
    return errors


def check(s: SystemSpec) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """(errors, warnings): DMA-capable passthrough devices need an SMMU that
    confines them, or ``dma_isolation: none``; the stream table is consistent."""
    errors: list[Diagnostic] = []
    warnings: list[Diagnostic] = []
    p = s.platform
    at = s.locs.diag
    on = enabled(s)
    if s.dma_isolation == "none" and p.smmus:
        warnings.append(at("dma_isolation", f"'dma_isolation: none': the SMMU(s) of platform '{p.name}' "
                                            f"({', '.join(u.name for u in p.smmus)}) are left off"))
    unconfined = unconfined_vms(s)
    for vm in s.vms:
        dma = [d for d in dict.fromkeys(vm.devices) if (dev := p.device(d)) is not None and dev.dma
               and not (on and p.smmu_of(dev) is not None)]
        for dev_name, _, q in vm.dma_on_fault:
            dev = p.device(dev_name)
            if dev is not None and not (on and p.smmu_of(dev) is not None):
                why = "the SMMUs are off ('dma_isolation: none')" if p.smmu_of(dev) is not None else \
                    f"it is not behind an SMMU of platform '{p.name}'"
                errors.append(at(q, f"device '{dev_name}': '{FAULT_KEY}' applies to DMA through an SMMU, and {why}"))
        for e in vm.pci:
            if e.on_dma_fault is not None and not (on and pcie_smmu(p) is not None):
                errors.append(at(join(e.path, FAULT_KEY), f"'{FAULT_KEY}' applies to DMA through an SMMU, and the "
                                                      + ("SMMUs are off ('dma_isolation: none')" if p.smmus else
                                                         f"platform '{p.name}' has none")))
        if not dma:
            continue
        names = ", ".join(f"'{d}'" for d in dma)
        if s.dma_isolation == "none":
            warnings.append(at("dma_isolation", f"VM '{vm.name}' drives DMA-capable device(s) {names} without "
                                                "an SMMU: it can read and write all physical memory"))
        else:
            i = vm.devices.index(dma[0])
            where = f"platform '{p.name}' has no SMMU support" if not p.smmus else \
                f"no SMMU of platform '{p.name}' is in front of it"
            errors.append(at(f"{vm.path}.devices[{i}]",
                             f"device '{dma[0]}' is DMA-capable and {where}: "
                             f"VM '{vm.name}' could read and write all physical memory through it; "
                             "state 'dma_isolation: none' in the config to accept this"))
    if s.recolor_pool is not None and unconfined:
        warnings.append(at("recolor_pool", f"VM(s) {', '.join(repr(v) for v in unconfined)} drive DMA-capable "
                                           "devices without an SMMU: recoloring them is refused at run time "
                                           "(the device would keep writing to the old frames)"))
    table = streams(s)
    seen: dict[tuple[str, int], DmaStream] = {}
    for st in table:
        unit = p.smmu_named(st.smmu)
        if unit is None:
            errors.append(at(st.path, f"stream 0x{st.sid:x} of '{st.device}': unknown SMMU '{st.smmu}'"))
            continue
        if st.on_fault not in FAULT_POLICIES:
            errors.append(at(st.path, f"'{st.device}': unknown fault policy '{st.on_fault}'"))
        if s.vm(st.vm) is None:
            errors.append(at(st.path, f"stream 0x{st.sid:x} of '{st.device}': unknown VM '{st.vm}'"))
        prev = seen.get((st.smmu, st.sid))
        if prev is not None:
            errors.append(at(st.path, f"stream ID 0x{st.sid:x} of SMMU '{st.smmu}' is given to '{st.device}' of VM "
                                      f"'{st.vm}' and to '{prev.device}' of VM '{prev.vm}' ({prev.path})"))
        seen.setdefault((st.smmu, st.sid), st)
    if len(table) > MAX_STREAMS:
        errors.append(at("vms", f"{len(table)} DMA streams: the hypervisor takes at most {MAX_STREAMS}"))
    for u in p.smmus if on else ():
        most = iommu.of_type(u.type).max_streams
        if most is not None and sum(1 for st in table if st.smmu == u.name) > most:
            errors.append(at("vms", f"SMMU '{u.name}' ({u.type}) matches at most {most} streams"))
    return errors, warnings


# --- report ------------------------------------------------------------------------


def document(s: SystemSpec) -> dict[str, Any] | None:
    """``check --json``'s ``dma`` member (None on a platform without SMMUs)."""
    p = s.platform
    if not p.smmus:
        return None
    return {
        "enabled": enabled(s),
        "smmus": [{"name": u.name, "type": u.type, "base": u.base, "size": u.size, "event_irq": u.event_irq,
                   "gerror_irq": u.gerror_irq, "pcie": u.pcie} for u in p.smmus],
        "streams": [{"smmu": st.smmu, "sid": st.sid, "vm": st.vm, "device": st.device, FAULT_KEY: st.on_fault}
                    for st in streams(s)],
    }


def report(s: SystemSpec) -> str:
    """What ``check`` prints about the SMMUs: which streams each VM owns."""
    p = s.platform
    if not p.smmus:
        return ""
    if not enabled(s):
        return "DMA isolation: off ('dma_isolation: none'): SMMU(s) " + \
            ", ".join(f"{u.name} ({u.type} @0x{u.base:x})" for u in p.smmus) + " left off\n"
    lines = ["DMA isolation (" + ", ".join(f"{u.name}: {u.type} @0x{u.base:x}" for u in p.smmus)
             + "; unknown streams abort):"]
    table = streams(s)
    if not table:
        lines.append("no VM owns a DMA stream")
    else:
        rows = [("VM", "DEVICE", "SMMU", "STREAMS", "ON_DMA_FAULT")]
        grouped: dict[tuple[str, str, str, str], list[int]] = {}
        for st in table:
            grouped.setdefault((st.vm, st.device, st.smmu, st.on_fault), []).append(st.sid)
        for (vm, dev, unit, pol), sids in grouped.items():
            rows.append((vm, dev, unit, ",".join(f"0x{x:x}" for x in sids), pol))
        widths = [max(len(r[i]) for r in rows) for i in range(5)]
        lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(lines) + "\n"


# --- parse, config.c, features -------------------------------------------


def parse_platform(r: Reader, top: Keys, p: Platform) -> Platform:
    """``smmus:`` (``smmu:``, the key once reserved for them, is refused)."""
    if "smmu" in top:  # the key once reserved for it (docs/qos.md "DMA isolation")
        raise r.fail(top["smmu"], "smmu", "SMMUs are listed under 'smmus:' (a list of {name, type, base, size, "
                                          "irqs, sources}; docs/dma.md)")
    if "smmus" not in top:
        return p
    return dataclasses.replace(p, smmus=r.each(top["smmus"], "smmus", lambda n, q: _parse_smmu(r, n, q),
                                               "a list of SMMUs"))


def _parse_smmu(r: Reader, node: YNode, path: str) -> SmmuSpec:
    """``smmus[i]``: {name, type, base, size, irqs: {event, gerror}, pcie, enable, sources} (docs/dma.md)."""
    m = r.mapping(node, path, ("name", "type", "base", "size", "irqs", "pcie", "sources", "enable"),
                  ("name", "type", "base", "size", "irqs", "sources"), "an SMMU (mapping)")
    irqs = r.mapping(m["irqs"], join(path, "irqs"), ("event", "gerror"), ("event",), "a mapping {event, gerror}")
    event = r.irq(irqs["event"], join(path, "irqs.event"))
    sources = r.each(m["sources"], join(path, "sources"), lambda n, q: r.text(n, q), "a list of cited sources")
    if not sources:
        raise r.fail(m["sources"], join(path, "sources"), "cite at least one source of these values")
    return SmmuSpec(
        name=r.name(m["name"], join(path, "name"), "an SMMU name"),
        type=r.choice(m["type"], join(path, "type"), iommu.types()),
        base=r.address(m["base"], join(path, "base")),
        size=r.size(m["size"], join(path, "size")),
        event_irq=event,
        gerror_irq=r.irq(irqs["gerror"], join(path, "irqs.gerror")) if "gerror" in irqs else event,
        pcie=r.boolean(m["pcie"], join(path, "pcie")) if "pcie" in m else False,
        sources=sources,
        path=path,
        enable=r.choice(m["enable"], join(path, "enable"), ("always", "with-streams")) if "enable" in m else "always",
    )


def parse_system(r: Reader, top: Keys, s: SystemSpec) -> SystemSpec:
    """``dma_isolation: none``."""
    if "dma_isolation" not in top:
        return s
    return dataclasses.replace(s, dma_isolation=r.choice(top["dma_isolation"], "dma_isolation", ("none",)))


def emit_system(out: CSource, system: SystemView) -> list[Field]:
    """The SMMUs to drive, their stream tables and the DMA streams
    (hypervisor/drivers/iommu.h): struct cfg_system's ``iommu`` (none when no
    SMMU is driven)."""
    spec = system.spec
    units = driven(spec)
    if not units:
        return []
    index = {u.name: k for k, u in enumerate(units)}
    vm_index = {vm.name: vm.index for vm in system.vms}
    table = [st for st in streams(spec) if st.smmu in index]
    out.line()
    out.line("/* DMA isolation: the SMMUs and the streams each VM owns (docs/dma.md) */")
    rows = []
    drivers = {u.name: iommu.of_type(u.type) for u in units}
    extra: dict[int, iommu.Fields] = {}  # id(stream): its driver's fields
    for ops in sorted({d.ops for d in drivers.values() if d.ops}):
        out.line(f"extern const struct iommu_ops {ops};")
    for k, u in enumerate(units):
        mine = [st for st in table if st.smmu == u.name]
        unit_streams = [iommu.Stream(st.sid, vm_index[st.vm]) for st in mine]
        cpu = system.vms[unit_streams[0].vm].cpus[0] if unit_streams else 0
        fields = [("name", cstr(u.name)), ("ops", f"&{drivers[u.name].ops}"),
                  ("base", hexa(u.base)), ("size", hexa(u.size)),
                  ("event_irq", str(u.event_irq)), ("gerror_irq", str(u.gerror_irq)),
                  ("irq_mpidr", hexa(system.platform.mpidr[cpu]))]
        rows.append(fields + drivers[u.name].unit_fields(k, unit_streams, out.line))
        extra |= {id(st): f for st, f in zip(mine, drivers[u.name].stream_fields(unit_streams), strict=True)}
    out.array("static const struct iommu_unit iommu_units", struct_rows(rows))
    # each VM's first stream on a unit programs the VM's context there
    first = {id(st) for st in {(st.smmu, st.vm): st for st in reversed(table)}.values()}
    if table:
        out.array("static const struct iommu_stream iommu_streams", struct_rows(
            [("unit", str(index[st.smmu])), ("sid", hexa(st.sid)), ("vm", str(vm_index[st.vm])),
             ("device", cstr(st.device)),
             ("flags", " | ".join(f for f, on in (("IOMMU_STREAM_STOP_VM", st.on_fault == "stop-vm"),
                                                  ("IOMMU_STREAM_CTX_FIRST", id(st) in first)) if on) or "0")]
            + extra[id(st)]
            for st in table))
    return [("iommu", f"{{ .nunits = {len(units)}, .units = iommu_units, .nstreams = {len(table)}, "
                      f".streams = {'iommu_streams' if table else 'NULL'} }}")]


def emit_vm(out: CSource, system: SystemView, vm: VmView) -> list[Field]:
    """The flag of a VM whose DMA no SMMU confines (dma_isolation: none)."""
    return [("flags", "CFG_VM_DMA_UNCONFINED")] if vm.name in unconfined_vms(system.spec) else []


def driver_feature(smmu_type: str) -> str:
    """The feature of an SMMU type's driver (its descriptor's): smmu-500 -> SMMU500."""
    return iommu.of_type(smmu_type).feature or iommu.of_type(smmu_type).name.upper()


def needs(system: SystemView) -> list[Need]:
    """The driver of each SMMU driven, for the VMs with streams on it."""
    out: list[Need] = []
    table = streams(system.spec)
    for u in driven(system.spec):
        name = driver_feature(u.type)
        owners = sorted({st.vm for st in table if st.smmu == u.name})
        out += [Need(name, f"vm {vm}", f"has DMA streams on SMMU {u.name} ({u.type})") for vm in owners]
        if not owners:
            out.append(Need(name, "the platform", f"drives SMMU {u.name} ({u.type}, enable: always)"))
    return out


# its features are its SMMU drivers' (bulkhead/drivers/iommu), each built when needed
MECHANISM = Mechanism(
    name="dma", rank=60, docs="docs/dma.md", features={},
    platform_keys=("smmu", "smmus"), system_keys=("dma_isolation",), vm_keys=(), region_keys=(),
    device_keys=(FAULT_KEY,), parse_platform=parse_platform, parse_system=parse_system, parse_vm=None, parse_region=None,
    check_device=check_device, parse_device=parse_device,
    check_platform=check_platform, check=check, ipa_items=None, reserved_ram=None, guest_params=None,
    limits=(("IOMMU_MAX_STREAMS", "drivers/iommu.h", MAX_STREAMS, "bulkhead.config.dma.MAX_STREAMS"),
            ("IOMMU_MAX_UNITS", "drivers/iommu.h", MAX_SMMUS, "bulkhead.config.dma.MAX_SMMUS")),
    emit_platform=None,
    emit_tables=None, emit_vm=emit_vm, emit_system=emit_system, needs=needs,
)
