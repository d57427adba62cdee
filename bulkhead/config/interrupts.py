# SPDX-License-Identifier: Apache-2.0
"""Interrupt delivery mode of each VM: ``interrupts: emulated | direct``.

``emulated`` (the default): every physical interrupt is taken at EL2 and
presented to the guest through the GIC list registers. ``direct``: the
VM's vCPUs run with HCR_EL2.IMO/FMO clear, so the guest acknowledges and
ends its own interrupts on the physical CPU interface with no hypervisor
instruction; the hypervisor's own events on those CPUs come from the secure
firmware through SDEI (docs/interrupts.md). This module holds the checks
and the choice of the spare SPIs that carry a direct VM's emulated
interrupts (the virtual UART's, doorbells): with no list registers, the
hypervisor sets such an SPI pending at the VM's CPU (docs/interrupts.md
"Emulated sources").
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence

from bulkhead.base.csource import CSource, Field
from bulkhead.base.errors import Diagnostic
from bulkhead.config.mechanism import Keys, Mechanism, Need, SystemView, VmView
from bulkhead.config.model import ConsoleSpec, Platform, ShmemSpec, SystemSpec, VmSpec
from bulkhead.config.reader import Reader, join
from bulkhead.config.yamlpos import YMap

# A direct VM's console whose ``irq`` the config leaves out: the toolchain
# picks a spare SPI (pick_spares); 0 until then, or when none is left.
PICK = 0
# The parameter that tells a direct bare-metal guest its virtual UART's
# INTID (the parameter block; guests/direct/emul.c)
CONSOLE_PARAM = "console_irq"
# ... and its guest PMU's overflow PPI (guests/pmu)
PMU_PARAM = "pmu_irq"
# ... and, with PCI functions, the first of its LPIs (guests/its)
LPI_PARAM = "lpi_base"
# Physical LPIs from 8192 on, in blocks of 256 per VM with PCI functions
# (hypervisor/core/vgic/vits.c; VITS_NR_LPIS: a VM's LPIs)
LPI_BASE = 8192
LPI_BLOCK = 256


def lpi_blocks(vms: Sequence[VmSpec]) -> tuple[VmSpec, ...]:
    """Gives each VM with PCI functions its block of physical LPIs: the
    direct VMs' first, in their order (a direct guest acknowledges the
    physical INTID of its MSI, so its LPIs are its block; the first gets
    8192-8447, where a guest that allocates from 8192 up, as Linux does,
    expects them), then every other VM the block after those at its index
    (8192 + 256 x index when no direct VM has functions)."""
    direct = [vm.name for vm in vms if vm.interrupts == "direct" and vm.pci]
    out: list[VmSpec] = []
    for i, vm in enumerate(vms):
        block = direct.index(vm.name) if vm.name in direct else len(direct) + i
        out.append(dataclasses.replace(vm, lpi_base=LPI_BASE + LPI_BLOCK * block if vm.pci else 0))
    return tuple(out)


def pmu_irq(p: Platform, vm: VmSpec) -> int:
    """The PPI a direct VM's guest PMU overflow interrupt is: the platform's
    first spare PPI (PPIs are per CPU: every direct VM may have the same);
    0 for an emulated VM (the platform's PMU PPI, through a list register)
    or when the platform has no PMU PPI or no spare PPI (check() says so)."""
    if vm.interrupts != "direct" or p.bandwidth is None or not p.bandwidth.pmu_irq or not p.gic.spare_ppis:
        return 0
    return p.gic.spare_ppis[0]


def _spans(irqs: Iterable[int]) -> str:
    """208-287, 300 ..."""
    out: list[str] = []
    for irq in sorted(set(irqs)):
        if out and out[-1].split("-")[-1] == str(irq - 1):
            out[-1] = f"{out[-1].split('-')[0]}-{irq}"
        else:
            out.append(str(irq))
    return ", ".join(out) or "none"


def spare_users(vms: Sequence[VmSpec], shmem: Sequence[ShmemSpec]) -> dict[int, list[str]]:
    """The SPIs the direct VMs' emulated sources use (consoles with an
    ``irq``, doorbells): SPI -> what uses it."""
    users: dict[int, list[str]] = {}
    for vm in vms:
        if vm.interrupts != "direct":
            continue
        if vm.console is not None and vm.console.irq != PICK:
            users.setdefault(vm.console.irq, []).append(f"the virtual UART of VM '{vm.name}'")
        for sh in shmem:
            for m in sh.maps:
                if m.vm == vm.name and m.doorbell_irq is not None:
                    users.setdefault(m.doorbell_irq, []).append(
                        f"the doorbell of VM '{vm.name}' for shared memory '{sh.name}'")
    return users


def pick_spares(p: Platform, vms: Sequence[VmSpec], shmem: Sequence[ShmemSpec]) -> tuple[VmSpec, ...]:
    """Gives each direct VM whose console has no explicit ``irq`` (PICK) a
    spare SPI no other direct VM's source uses; PICK stays when none is left
    (check() then says so)."""
    used = spare_users(vms, shmem)
    free = [irq for irq in p.gic.spare_spis if irq not in used]
    out: list[VmSpec] = []
    for vm in vms:
        if vm.interrupts == "direct" and vm.console is not None and vm.console.irq == PICK and free:
            vm = dataclasses.replace(vm, console=ConsoleSpec(vm.console.ipa, free.pop(0)))
        out.append(vm)
    return tuple(out)


def _check_spares(s: SystemSpec, vm: VmSpec, errors: list[Diagnostic]) -> None:
    """A direct VM's emulated sources are spare SPIs (its console, doorbells)."""
    p = s.platform
    at = s.locs.diag
    spare = set(p.gic.spare_spis)
    users = spare_users(s.vms, s.shmem)
    free = [irq for irq in p.gic.spare_spis if irq not in users]
    declared = (f"platform '{p.name}' declares gic.spare_spis: {_spans(spare)}" if spare
                else f"platform '{p.name}' declares no spare SPIs (gic.spare_spis)")
    hint = f"free: {_spans(free[:8])}{' ...' if len(free) > 8 else ''}" if spare else \
        "list SPIs no device drives in the platform file's gic.spare_spis"
    why = (f"VM '{vm.name}' has 'interrupts: direct': an emulated interrupt reaches it as a spare SPI "
           "the hypervisor sets pending (no list registers)")
    if vm.console is not None:
        if vm.console.irq == PICK:
            errors.append(at(f"{vm.path}.interrupts", f"{why}; no spare SPI is left for its virtual UART ({declared}); "
                             "give it 'console: none' or free one"))
        elif vm.console.irq not in spare:
            errors.append(at(f"{vm.path}.console.irq",
                             f"{why}; its virtual UART's IRQ {vm.console.irq} is not one ({declared}); "
                             f"leave console.irq out (the toolchain picks one) or give a free one ({hint})"))
    for sh in s.shmem:
        for m in sh.maps:
            if m.vm != vm.name or m.doorbell_irq is None:
                continue
            if m.doorbell_irq not in spare:
                errors.append(at(f"{m.path}.doorbell_irq",
                                 f"{why}; doorbell_irq {m.doorbell_irq} is not one ({declared}); "
                                 f"give a free spare SPI ({hint}) or drop doorbell_irq (poll the shared memory)"))
            elif len(users.get(m.doorbell_irq, ())) > 1:
                own = f"the doorbell of VM '{vm.name}' for shared memory '{sh.name}'"
                others = [u for u in users[m.doorbell_irq] if u != own]
                errors.append(at(f"{m.path}.doorbell_irq",
                                 f"VM '{vm.name}': spare SPI {m.doorbell_irq} is also {', '.join(others)}; "
                                 f"each direct source needs its own ({hint})"))
    if vm.console is not None and vm.console.irq in spare and len(users.get(vm.console.irq, ())) > 1:
        others = [u for u in users[vm.console.irq] if u != f"the virtual UART of VM '{vm.name}'"]
        errors.append(at(f"{vm.path}.console.irq",
                         f"VM '{vm.name}': spare SPI {vm.console.irq} is also {', '.join(others)}; "
                         f"each direct source needs its own ({hint})"))
    for key, what in ((CONSOLE_PARAM, "its virtual UART's INTID"), (PMU_PARAM, "its guest PMU's overflow PPI"),
                      (LPI_PARAM, "the first of its LPIs")):
        if any(k == key for k, _ in vm.params):
            errors.append(at(f"{vm.path}.params.{key}",
                             f"VM '{vm.name}': the parameter '{key}' is reserved in a direct VM (the "
                             f"toolchain sets it to {what})"))
    if p.bandwidth is not None and p.bandwidth.pmu_irq and not pmu_irq(p, vm):
        errors.append(at(f"{vm.path}.interrupts",
                         f"VM '{vm.name}' has 'interrupts: direct': its guest PMU's overflow interrupt reaches "
                         f"it as a spare PPI the hypervisor sets pending, and platform '{p.name}' declares none "
                         "(list a PPI no device drives in the platform file's gic.spare_ppis)"))


def check(s: SystemSpec) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """(errors, warnings) of the VMs' ``interrupts`` keys."""
    p = s.platform
    at = s.locs.diag
    errors: list[Diagnostic] = []
    warnings: list[Diagnostic] = []
    for vm in s.vms:
        if vm.interrupts != "direct":
            continue
        key = f"{vm.path}.interrupts"
        if p.gic.version != 3:
            errors.append(at(key, f"VM '{vm.name}': 'interrupts: direct' needs a GICv3; platform '{p.name}' "
                                  f"has a GICv{p.gic.version}"))
        if 0 in vm.cpus and s.sdei:
            errors.append(at(f"{vm.path}.cpus", f"VM '{vm.name}': CPU 0 takes the hypervisor's console "
                                                "and device interrupts, which under 'sdei: true' are Group 1 "
                                                "ones the guest would take; a VM with 'interrupts: direct' "
                                                "cannot use it (without 'sdei', booted with no EL3, they "
                                                "are Group 0 FIQs: docs/interrupts.md)"))
        if vm.bandwidth is not None and not s.sdei and not any(o.bandwidth for o in s.vms if o is not vm):
            warnings.append(at(key, f"VM '{vm.name}' is regulated with 'interrupts: direct' and no 'sdei', and no "
                                    "other VM is regulated: booted without EL3 its hypervisor events are Group 0 "
                                    "FIQs, which its guest can hold off through ICC_AP1R0_EL1, and only another "
                                    "VM's regulated CPU can take its CPUs back; for a guest you do not trust, "
                                    "regulate another VM or boot through TF-A and declare 'sdei: true' "
                                    "(docs/interrupts.md \"Closing the ICC_AP1R0_EL1 hole\")"))
        if vm.type == "linux" and s.sdei:
            errors.append(at(key, f"VM '{vm.name}': 'interrupts: direct' runs Linux only without 'sdei' (booted "
                                  "with no EL3, docs/interrupts.md \"Linux in direct mode\"): under SDEI the "
                                  "hypervisor drops its guest's SGI 0, Linux's rescheduling IPI"))
        if s.io is not None and (s.io.vm == vm.name or any(c.vm == vm.name for c in s.io.clients)):
            errors.append(at(key, f"VM '{vm.name}': the shared I/O device raises emulated interrupts; "
                                  "it cannot serve or be served by a VM with 'interrupts: direct'"))
        else:
            _check_spares(s, vm, errors)
        if _direct_msi(p, vm) and vm.type != "baremetal" and vm.lpi_base != LPI_BASE:
            errors.append(at(f"{vm.path}.pci", f"VM '{vm.name}' has 'interrupts: direct' and MSIs: its guest "
                                               f"acknowledges its physical LPIs, {vm.lpi_base}-"
                                               f"{vm.lpi_base + LPI_BLOCK - 1} (8192 on are the first direct "
                                               "VM's with PCI functions), which only a bare-metal guest is told "
                                               f"(the parameter '{LPI_PARAM}'); a 'type: {vm.type}' guest allocates "
                                               "from 8192: make it the first direct VM with PCI functions"))
    return errors, warnings


def parse_system(r: Reader, top: Keys, s: SystemSpec) -> SystemSpec:
    """``sdei: true``; then the spare SPIs of the direct VMs' consoles (after
    shared I/O added its doorbells: :func:`pick_spares`) and the VMs' LPI
    blocks (:func:`lpi_blocks`)."""
    s = dataclasses.replace(s, sdei=r.boolean(top["sdei"], "sdei")) if "sdei" in top else s
    return dataclasses.replace(s, vms=lpi_blocks(pick_spares(s.platform, s.vms, s.shmem)))


def parse_vm(r: Reader, m: Keys, vm: VmSpec, p: Platform) -> VmSpec:
    """``interrupts: emulated | direct``. A direct VM's virtual UART
    interrupt is a spare SPI the toolchain picks (PICK) unless its
    ``console`` gives an ``irq``."""
    if "interrupts" not in m:
        return vm
    mode = r.choice(m["interrupts"], join(vm.path, "interrupts"), ("emulated", "direct"))
    console = vm.console
    given = isinstance(m.get("console"), YMap) and "irq" in r.mapping(m["console"], join(vm.path, "console"),
                                                                      ("ipa", "irq"))
    if mode == "direct" and console is not None and not given:
        console = ConsoleSpec(console.ipa, PICK)
    return dataclasses.replace(vm, interrupts=mode, console=console)


def _direct_msi(p: Platform, vm: VmSpec) -> bool:
    """A direct VM whose PCI functions have a virtual ITS (docs/interrupts.md
    "MSIs in a direct VM")."""
    return vm.interrupts == "direct" and bool(vm.pci) and p.gic.its != 0


def guest_params(p: Platform, vm: VmSpec) -> list[tuple[str, str]]:
    """A direct bare-metal guest's virtual UART INTID (a spare SPI, docs/interrupts.md
    "Emulated sources"), guest PMU PPI and, with MSIs, its first LPI."""
    own = [(CONSOLE_PARAM, str(vm.console.irq))] if vm.interrupts == "direct" and vm.console else []
    own += [(LPI_PARAM, str(vm.lpi_base))] if _direct_msi(p, vm) else []
    return own + ([(PMU_PARAM, str(pmu_irq(p, vm)))] if pmu_irq(p, vm) else [])


def emit_vm(out: CSource, system: SystemView, vm: VmView) -> list[Field]:
    """A direct VM's flag and guest PMU PPI (struct cfg_vm)."""
    pmu = pmu_irq(system.platform, vm.spec)
    return ([("flags", "CFG_VM_DIRECT")] if vm.spec.interrupts == "direct" else []) + \
        ([("pmu_irq", str(pmu))] if pmu else [])


def check_platform(p: Platform) -> list[Diagnostic]:
    """``gic.v4`` (GICv4 direct injection of the VMs' device interrupts,
    docs/interrupts.md "GICv4 direct injection") needs the ITS, and agrees
    with the QEMU machine's ``gic-version`` where that names one."""
    errors = []
    if p.gic.v4 and not p.gic.its:
        errors.append(p.locs.diag("gic.v4", "GICv4 direct injection maps device events through the ITS: "
                                            "give gic.its too"))
    named = re.search(r"(?:^|,)gic-version=([^,]+)", p.qemu.machine) if p.qemu is not None else None
    if named is not None and (named.group(1) == "4") != p.gic.v4:
        errors.append(p.locs.diag("gic.v4" if p.gic.v4 else "gic", f"the QEMU machine has gic-version="
                                  f"{named.group(1)}, so gic.v4 must be {str(named.group(1) == '4').lower()}"))
    return errors


def needs(system: SystemView) -> list[Need]:
    """DIRECT for a direct VM; GICV4 (its tables) for a VM owning PCI
    functions on a platform whose ITS is a GICv4's (gic.v4)."""
    g = system.platform.gic
    return [Need("DIRECT", f"vm {vm.name}", "has interrupts: direct")
            for vm in system.vms if vm.spec.interrupts == "direct"] + \
        [Need("GICV4", f"vm {vm.name}", "owns PCI functions on a platform with gic.v4")
         for vm in system.vms if vm.pci and g.its and g.v4]


MECHANISM = Mechanism(
    name="interrupts", rank=70, docs="docs/interrupts.md",
    features={"DIRECT": ("core/vcpu/irq_direct.c", "core/vcpu/sgi_filter.c", "arch/aarch64/sdei.c"),
              "GICV4": ()},  # its C is drivers/gic/gicv3_its.c's #if IS_ENABLED(GICV4)
    platform_keys=(), system_keys=("sdei",), vm_keys=("interrupts",), region_keys=(), device_keys=(),
    parse_platform=None, parse_system=parse_system, parse_vm=parse_vm, parse_region=None,
    check_device=None, parse_device=None,
    check_platform=check_platform, check=check, ipa_items=None, reserved_ram=None, guest_params=guest_params,
    limits=(), emit_platform=None,
    emit_tables=None, emit_vm=emit_vm, emit_system=None, needs=needs,
)
