# SPDX-License-Identifier: Apache-2.0
"""What ``bulkhead check`` prints: a table per VM, or a JSON document."""

from __future__ import annotations

from typing import Any

from bulkhead.layout import System, Vm
from bulkhead.model import human_size

HEADERS = ("VM", "TYPE", "CPUS", "MEMORY (IPA -> PA, size)", "DEVICES", "IRQS", "CONSOLE", "SHMEM")


def _cells(system: System, vm: Vm) -> list[list[str]]:
    console = "none"
    if vm.console is not None:
        console = f"0x{vm.console.ipa:x} irq {vm.console.irq}"
        if system.console_input == vm.index:
            console += " (input)"
    shmem = [
        f"{m.name} @0x{m.ipa:x} {human_size(m.size)}" + (f" irq {m.doorbell_irq}" if m.doorbell_irq else "")
        for m in vm.shmem
    ]
    return [
        [vm.name],
        [vm.type],
        [",".join(str(c) for c in vm.cpus)],
        [f"0x{m.ipa:x} -> 0x{m.pa:x} {human_size(m.size)}" for m in vm.memory],
        [", ".join(d.name for d in vm.mmio) or "-"],
        [", ".join(str(i) for i in vm.irqs) or "-"],
        [console],
        shmem or ["-"],
    ]


def table(system: System) -> str:
    rows = [[[h] for h in HEADERS]] + [_cells(system, vm) for vm in system.vms]
    widths = [max(len(line) for row in rows for line in row[i]) for i in range(len(HEADERS))]
    out = []
    for row in rows:
        height = max(len(cell) for cell in row)
        for k in range(height):
            parts = [(cell[k] if k < len(cell) else "").ljust(w) for cell, w in zip(row, widths)]
            out.append("  ".join(parts).rstrip())
    return "\n".join(out) + "\n"


def headline(system: System) -> str:
    s = system.spec
    ci = system.vms[system.console_input].name if system.console_input >= 0 else "none"
    n = len(system.vms)
    return (f"{s.display}: OK: platform {system.platform.name}, {n} VM{'s' if n != 1 else ''}, "
            f"console input: {ci}, config hash 0x{system.config_hash:016x}\n")


def document(system: System) -> dict[str, Any]:
    """The resolved configuration as JSON-ready data (addresses as integers)."""
    p = system.platform
    return {
        "config": str(system.spec.file),
        "config_hash": f"0x{system.config_hash:016x}",
        "platform": {
            "name": p.name,
            "file": str(p.file),
            "cpus": list(p.mpidr),
            "ram": {"base": p.ram.base, "size": p.ram.size},
            "hypervisor": {"base": p.hypervisor.base, "size": p.hypervisor.size},
            "staging": {"base": p.staging.base, "size": p.staging.size},
        },
        "console_input": system.vms[system.console_input].name if system.console_input >= 0 else None,
        "vms": [_vm_doc(vm) for vm in system.vms],
        "shmem": [
            {"name": sh.name, "pa": sh.pa, "size": sh.size, "vms": list(sh.vms)} for sh in system.shmems
        ],
    }


def _vm_doc(vm: Vm) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "name": vm.name,
        "index": vm.index,
        "type": vm.type,
        "cpus": list(vm.cpus),
        "entry": vm.entry,
        "boot_arg": vm.boot_arg,
        "on_fault": vm.on_fault,
        "memory": [{"ipa": m.ipa, "pa": m.pa, "size": m.size} for m in vm.memory],
        "devices": [
            {"name": d.name, "base": d.pa, "size": d.size, "irqs": list(d.irqs)} for d in vm.mmio
        ],
        "irqs": list(vm.irqs),
        "console": None if vm.console is None else {"ipa": vm.console.ipa, "irq": vm.console.irq},
        "shmem": [
            {"name": m.name, "ipa": m.ipa, "pa": m.pa, "size": m.size, "doorbell_irq": m.doorbell_irq or None}
            for m in vm.shmem
        ],
        "images": [
            {
                "name": img.name,
                "file": str(img.source) if img.source else None,
                "guest": img.guest,
                "dst_ipa": img.dst_ipa,
                "size": img.size,
            }
            for img in vm.images
        ],
        "pt_pages": vm.pt_pages,
    }
    if vm.linux is not None:
        doc["bootargs"] = vm.linux.bootargs
        doc["initrd"] = (None if vm.linux.initrd is None
                         else {"start": vm.linux.initrd.base, "end": vm.linux.initrd.end})
    if vm.params_text is not None:
        doc["params"] = vm.params_text
    return doc
