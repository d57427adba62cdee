# SPDX-License-Identifier: Apache-2.0
"""Interrupt delivery mode of each VM: ``interrupts: emulated | direct``.

``emulated`` (the default): every physical interrupt is taken at EL2 and
presented to the guest through the GIC list registers. ``direct``: the
VM's vCPUs run with HCR_EL2.IMO/FMO clear, so the guest acknowledges and
ends its own interrupts on the physical CPU interface with no hypervisor
instruction; the hypervisor's own events on those CPUs come from the secure
firmware through SDEI (docs/interrupts.md). This module holds the checks.
"""

from __future__ import annotations

from bulkhead.base.errors import Diagnostic
from bulkhead.config.model import SystemSpec

FIRMWARE_HINT = ("TF-A built with SDEI_SUPPORT=1 EL3_EXCEPTION_HANDLING=1 and Bulkhead's event table, "
                 "then 'sdei: true' in the system file; docs/interrupts.md")


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
        if not s.sdei:
            errors.append(at(key, f"VM '{vm.name}': 'interrupts: direct' needs the secure firmware's SDEI, "
                                  f"which the system does not declare ({FIRMWARE_HINT})"))
        if 0 in vm.cpus:
            errors.append(at(f"{vm.path}.cpus", f"VM '{vm.name}': CPU 0 takes the hypervisor's console "
                                                "and device interrupts; a VM with 'interrupts: direct' "
                                                "cannot use it"))
        if vm.type == "linux":
            errors.append(at(key, f"VM '{vm.name}': 'interrupts: direct' runs bare-metal guests only "
                                  "(a Linux VM's device tree would need the physical MPIDRs its vCPUs see)"))
        for sh in s.shmem:
            for m in sh.maps:
                if m.vm == vm.name and m.doorbell_irq is not None:
                    errors.append(at(f"{m.path}.doorbell_irq",
                                     f"VM '{vm.name}' has 'interrupts: direct': a doorbell is an emulated "
                                     "interrupt, which needs the list registers; drop doorbell_irq (poll "
                                     "the shared memory)"))
        if s.io is not None and (s.io.vm == vm.name or any(c.vm == vm.name for c in s.io.clients)):
            errors.append(at(key, f"VM '{vm.name}': the shared I/O device raises emulated interrupts; "
                                  "it cannot serve or be served by a VM with 'interrupts: direct'"))
        if s.console_input == vm.name:
            warnings.append(at(key, f"VM '{vm.name}' has 'interrupts: direct': its virtual UART's "
                                    "interrupt is not delivered, console input must be polled"))
    return errors, warnings
