# SPDX-License-Identifier: Apache-2.0
"""Semantic checks on a parsed platform and system config.

Each check appends a diagnostic (file position, key path, message); all of a
phase's problems are reported together, sorted by position.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bulkhead.base.errors import ConfigError, Diagnostic
from bulkhead.config import coloring, interrupts, mechanisms
from bulkhead.config.model import (
    IPA_BITS,
    MAX_CPUS,
    MAX_RAM_BANKS,
    PAGE,
    Locs,
    Platform,
    Range,
    SystemSpec,
    VmSpec,
)
from bulkhead.config.reader import join


class Checker:
    """Collects diagnostics for one file's key paths."""

    def __init__(self, locs: Locs) -> None:
        self.locs = locs
        self.diags: list[Diagnostic] = []

    def error(self, path: str, message: str) -> None:
        self.diags.append(self.locs.diag(path, message))

    def raise_if_any(self) -> None:
        if self.diags:
            raise ConfigError(sorted(self.diags, key=Diagnostic.sort_key))

    def aligned(self, path: str, value: int, what: str) -> bool:
        if value % PAGE:
            self.error(path, f"{what} 0x{value:x} is not a multiple of 4 KiB" if what == "size"
                       else f"{what} 0x{value:x} is not 4 KiB aligned")
            return False
        return True


def check_platform(p: Platform) -> None:
    c = Checker(p.locs)
    if not 1 <= p.ncpus <= MAX_CPUS:
        c.error("cpus", f"a platform has 1 to {MAX_CPUS} CPUs, got {p.ncpus}")
    seen: dict[int, int] = {}
    for i, mpidr in enumerate(p.mpidr):
        if mpidr in seen:
            c.error(f"cpus[{i}]", f"MPIDR 0x{mpidr:x} is given twice (also cpus[{seen[mpidr]}])")
        seen.setdefault(mpidr, i)
    banks = [(f"ram[{i}]" if p.ram_banks and len(p.ram_banks) > 1 else "ram", b) for i, b in enumerate(p.banks)]
    areas: list[tuple[str, Range]] = [*banks, ("hypervisor", p.hypervisor), ("staging", p.staging),
                                      ("mmio", p.mmio)]
    for key, r in areas:
        c.aligned(join(key, "base"), r.base, "base")
        c.aligned(join(key, "size"), r.size, "size")
    if len(banks) > MAX_RAM_BANKS:
        c.error("ram", f"{len(banks)} RAM banks: at most {MAX_RAM_BANKS}")
    for i, (key, bank) in enumerate(banks):
        for other_key, other in banks[:i]:
            if bank.overlaps(other):
                c.error(key, f"RAM bank {bank} overlaps {other_key} ({other})")
        if bank.overlaps(p.mmio):
            c.error("mmio", f"MMIO window {p.mmio} overlaps RAM ({bank})")
    for key in ("hypervisor", "staging"):
        r = getattr(p, key)
        if not p.ram.contains(r):
            where = "RAM" if len(banks) == 1 else "the first RAM bank"
            c.error(key, f"{key} area {r} is not inside {where} ({p.ram})")
    if p.hypervisor.overlaps(p.staging):
        c.error("staging", f"staging area {p.staging} overlaps the hypervisor area ({p.hypervisor})")
    for i, res in enumerate(p.reserved):
        for key in ("hypervisor", "staging"):
            if getattr(p, key).overlaps(res.pages()):
                c.error(key, f"{key} area {getattr(p, key)} overlaps reserved memory {res} (reserved[{i}])")
    total = sum(b.size for b in p.banks)
    if p.qemu is not None and total > p.qemu.memory:
        c.error(join(banks[0][0], "size") if len(banks) == 1 else "ram",
                f"RAM size 0x{total:x} is larger than the QEMU memory 0x{p.qemu.memory:x}")

    spis = p.gic.spi_range
    for path, irq in (("gic.maintenance_irq", p.gic.maintenance_irq),
                      ("timer.hyp_irq", p.timer.hyp_irq), ("timer.virt_irq", p.timer.virt_irq),
                      ("timer.phys_irq", p.timer.phys_irq), ("timer.secure_irq", p.timer.secure_irq)):
        if not 16 <= irq < 32:
            c.error(path, f"IRQ {irq} is not a PPI (16-31)")
    # the hypervisor hands these two PPIs to the VM of the CPU (core/irq/irq.h)
    for path, irq, fixed_irq in (("timer.virt_irq", p.timer.virt_irq, 27), ("timer.phys_irq", p.timer.phys_irq, 30)):
        if 16 <= irq < 32 and irq != fixed_irq:
            c.error(path, f"IRQ {irq}: Bulkhead routes the EL1 {path[6:10]} timer as PPI {fixed_irq} (the Arm SBSA number)")
    for path, irq in (("uart.irq", p.uart.irq), ("console.irq", p.console.irq)):
        if irq not in spis:
            c.error(path, f"IRQ {irq} is outside the SPI range {spis.start}-{spis.stop - 1}")
    c.aligned("console.ipa", p.console.ipa, "IPA")

    fixed = [("the UART", Range(p.uart.base, PAGE)), *p.gic.frames(p.ncpus)]
    for what, r in fixed:
        if not p.mmio.contains(r):
            c.error("mmio", f"{what} ({r}) is not inside the MMIO window ({p.mmio})")
    names: dict[str, str] = {}
    for dev in p.devices:
        if dev.name in names:
            c.error(join(dev.path, "name"), f"duplicate device name '{dev.name}' (also {names[dev.name]})")
        names.setdefault(dev.name, dev.path)
        if not p.mmio.contains(dev.range):
            c.error(dev.path, f"device '{dev.name}' ({dev.range}) is not inside the MMIO window ({p.mmio})")
        for what, r in fixed:
            if dev.range.overlaps(r):
                c.error(dev.path, f"device '{dev.name}' ({dev.range}) overlaps {what} ({r})")
        for i, irq in enumerate(dev.irqs):
            path = f"{dev.path}.irqs[{i}]"
            if irq not in spis:
                c.error(path, f"IRQ {irq} is outside the SPI range {spis.start}-{spis.stop - 1}")
            elif irq == p.uart.irq:
                c.error(path, f"IRQ {irq} belongs to the hypervisor's UART")
    driven = {p.uart.irq: "the hypervisor's UART"} | {irq: f"device '{d.name}'" for d in p.devices for irq in d.irqs}
    driven |= {irq: f"SMMU '{u.name}'" for u in p.smmus for irq in (u.event_irq, u.gerror_irq)}
    driven |= {irq: "the PCIe host bridge's INTx" for irq in (p.pci.intx if p.pci else ())}
    for irq in p.gic.spare_spis:
        if irq not in spis:
            c.error("gic.spare_spis", f"IRQ {irq} is outside the SPI range {spis.start}-{spis.stop - 1}")
        elif irq in driven:
            c.error("gic.spare_spis", f"SPI {irq} is not spare: {driven[irq]} drives it")
    wired = {p.gic.maintenance_irq, p.timer.hyp_irq, p.timer.virt_irq, p.timer.phys_irq, p.timer.secure_irq}
    wired |= {p.bandwidth.pmu_irq} if p.bandwidth else set()
    for irq in p.gic.spare_ppis:
        if not 16 <= irq < 32:
            c.error("gic.spare_ppis", f"IRQ {irq} is not a PPI (16-31)")
        elif irq in wired:
            c.error("gic.spare_ppis", f"PPI {irq} is not spare: the platform file gives it a use")
    for i, a in enumerate(p.devices):
        for b in p.devices[i + 1:]:
            if a.range.overlaps(b.range):
                c.error(b.path, f"device '{b.name}' ({b.range}) overlaps device '{a.name}' ({a.range})")
    for m in mechanisms.registered():
        c.diags += m.check_platform(p) if m.check_platform is not None else []
    c.raise_if_any()


@dataclass(frozen=True)
class _IpaItem:
    what: str
    range: Range
    path: str
    device: bool = False  # devices of one VM may share a page (platform ranges never overlap)


def check_system(s: SystemSpec, guest_sources: Path | None = None) -> None:
    """All semantic rules that do not need file contents or allocation.

    ``guest_sources``: the repository's ``guests/`` directory, to check that a
    ``guest:`` names an existing guest (skipped when None).
    """
    c = Checker(s.locs)
    _check_vms(c, s)
    _check_physical_memory(c, s)
    _check_devices(c, s)
    _check_virtual_irqs(c, s)
    _check_shmem_maps(c, s)

    # IPA space of each VM
    for vm in s.vms:
        _check_ipa_map(c, s, vm)

    # console input
    if s.console_input is not None and s.console_input != "none":
        target = s.vm(s.console_input)
        if target is None:
            c.error("console_input", f"unknown VM '{s.console_input}'")
        elif target.console is None:
            c.error("console_input", f"VM '{target.name}' has no console")

    # images and boot
    for vm in s.vms:
        _check_boot(c, vm, guest_sources)

    for m in mechanisms.registered():
        errors, warnings = m.check(s) if m.check is not None else ([], [])
        c.diags += errors
        s.warnings.extend(warnings)

    c.raise_if_any()


def _check_vms(c: Checker, s: SystemSpec) -> None:
    """VM count and names, and each VM's CPUs."""
    p = s.platform
    if len(s.vms) > p.ncpus:
        c.error("vms", f"{len(s.vms)} VMs but platform '{p.name}' has only {p.ncpus} CPUs")

    names: dict[str, str] = {}
    for vm in s.vms:
        if vm.name in names:
            c.error(join(vm.path, "name"), f"duplicate VM name '{vm.name}' (also {names[vm.name]})")
        names.setdefault(vm.name, join(vm.path, "name"))

    # CPUs
    cpu_owner: dict[int, str] = {}
    for vm in s.vms:
        if not vm.cpus:
            c.error(join(vm.path, "cpus"), "a VM needs at least one CPU")
        for i, cpu in enumerate(vm.cpus):
            path = f"{vm.path}.cpus[{i}]"
            if cpu >= p.ncpus:
                c.error(path, f"CPU {cpu} does not exist on platform '{p.name}' (CPUs 0-{p.ncpus - 1})")
            elif cpu in cpu_owner:
                c.error(path, f"CPU {cpu} is given twice (also {cpu_owner[cpu]})")
            else:
                cpu_owner[cpu] = path
        types = [p.cpu_type(cpu) for cpu in vm.cpus if cpu < p.ncpus]
        if len(set(types)) > 1 and not vm.mixed_core_types:
            mix = ", ".join(f"CPU {cpu} {p.cpu_type(cpu)}" for cpu in vm.cpus if cpu < p.ncpus)
            c.error(join(vm.path, "cpus"), f"the VM's CPUs are of different core types ({mix}); "
                                           "say so with mixed_core_types: true")


def _check_physical_memory(c: Checker, s: SystemSpec) -> None:
    """Explicit PAs: in RAM, clear of the hypervisor, staging and reserved areas, and of each other."""
    p = s.platform
    pa_items: list[tuple[str, Range, str]] = []
    for vm in s.vms:
        if not vm.memory:
            c.error(join(vm.path, "memory"), "a VM needs at least one memory region")
        for j, mem in enumerate(vm.memory):
            ok = c.aligned(join(mem.path, "ipa"), mem.ipa, "IPA")
            ok = c.aligned(join(mem.path, "size"), mem.size, "size") and ok
            if mem.ipa + mem.size > 1 << IPA_BITS:
                c.error(mem.path, f"IPA range {Range(mem.ipa, mem.size)} exceeds the {IPA_BITS}-bit IPA space")
            # colored regions: pa is a span start (checked when placed)
            colored = p.coloring is not None and coloring.region_spec(vm, mem) is not None
            if mem.pa is not None and c.aligned(join(mem.path, "pa"), mem.pa, "PA") and ok and not colored:
                pa_items.append((f"{vm.path}.memory[{j}]", Range(mem.pa, mem.size), join(mem.path, "pa")))
    for sh in s.shmem:
        ok = c.aligned(join(sh.path, "size"), sh.size, "size")
        colored = coloring.shmem_colors(s, sh)[0] is not None if sh.colors is None else p.coloring is not None
        if sh.pa is not None and c.aligned(join(sh.path, "pa"), sh.pa, "PA") and ok and not colored:
            pa_items.append((f"shared memory '{sh.name}'", Range(sh.pa, sh.size), join(sh.path, "pa")))
    for i, (_what, r, path) in enumerate(pa_items):
        if not p.in_ram(r):
            c.error(path, f"PA range {r} is outside platform RAM ({p.ram_text()})")
        elif r.overlaps(p.hypervisor):
            c.error(path, f"PA range {r} overlaps the hypervisor area ({p.hypervisor})")
        elif r.overlaps(p.staging):
            c.error(path, f"PA range {r} overlaps the staging area ({p.staging})")
        elif any(r.overlaps(res.pages()) for res in p.reserved):
            res = next(res for res in p.reserved if r.overlaps(res.pages()))
            c.error(path, f"PA range {r} overlaps reserved memory {res} (the platform's reserved: firmware's)")
        else:
            for other_what, other, _ in pa_items[:i]:
                if r.overlaps(other):
                    c.error(path, f"PA range {r} overlaps {other_what} (PA {other})")
                    break


def _check_devices(c: Checker, s: SystemSpec) -> None:
    """Passthrough devices: known, one VM's each, no page or IRQ shared with another VM."""
    p = s.platform
    dev_owner: dict[str, tuple[str, str]] = {}
    irq_owner: dict[int, tuple[str, str]] = {}
    for vm in s.vms:
        own: dict[str, str] = {}
        for i, dev_name in enumerate(vm.devices):
            path = f"{vm.path}.devices[{i}]"
            dev = p.device(dev_name)
            if dev is None:
                known = ", ".join(d.name for d in p.devices) or "none"
                c.error(path, f"unknown device '{dev_name}'; platform '{p.name}' has: {known}")
            elif dev_name in own:
                c.error(path, f"device '{dev_name}' is listed twice (also {own[dev_name]})")
            elif dev_name in dev_owner:
                owner_vm, owner_path = dev_owner[dev_name]
                c.error(path, f"device '{dev_name}' is already passed through to VM '{owner_vm}' ({owner_path})")
            else:
                own[dev_name] = path
                for other_name, (owner_vm, owner_path) in dev_owner.items():
                    other_dev = p.device(other_name)
                    if owner_vm != vm.name and other_dev is not None and dev.pages.overlaps(other_dev.pages):
                        c.error(path, f"device '{dev_name}' shares a 4 KiB page with device '{other_name}' "
                                      f"of VM '{owner_vm}' ({owner_path})")
                dev_owner[dev_name] = (vm.name, path)
                for irq in dev.irqs:
                    if irq in irq_owner and irq_owner[irq][0] != vm.name:
                        owner_vm, owner_dev = irq_owner[irq]
                        c.error(path, f"IRQ {irq} of device '{dev_name}' is already owned by VM "
                                      f"'{owner_vm}' (device '{owner_dev}')")
                    irq_owner.setdefault(irq, (vm.name, dev_name))


def _check_virtual_irqs(c: Checker, s: SystemSpec) -> None:
    """Per VM, the console and doorbell IRQs: SPIs, clear of its passthrough IRQs."""
    p = s.platform
    spis = p.gic.spi_range
    spi_text = f"{spis.start}-{spis.stop - 1}"
    for vm in s.vms:
        used: dict[int, str] = {}
        for dev_name in dict.fromkeys(vm.devices):
            dev = p.device(dev_name)
            for irq in dev.irqs if dev else ():
                used.setdefault(irq, f"device '{dev_name}'")
        if vm.console is not None:
            path = join(vm.path, "console.irq")
            irq = vm.console.irq
            if irq == interrupts.PICK:
                pass  # a direct VM's, none left to pick: interrupts.check says so
            elif irq not in spis:
                c.error(path, f"IRQ {irq} is outside the SPI range {spi_text}")
            elif irq in used:
                c.error(path, f"console IRQ {irq} collides with {used[irq]} of VM '{vm.name}'")
            used.setdefault(irq, "the console IRQ")
            c.aligned(join(vm.path, "console.ipa"), vm.console.ipa, "IPA")
        for sh in s.shmem:
            for mp in sh.maps:
                if mp.vm != vm.name or mp.doorbell_irq is None:
                    continue
                path = join(mp.path, "doorbell_irq")
                irq = mp.doorbell_irq
                if irq not in spis:
                    c.error(path, f"IRQ {irq} is outside the SPI range {spi_text}")
                elif irq in used:
                    c.error(path, f"doorbell IRQ {irq} collides with {used[irq]} of VM '{vm.name}'")
                used.setdefault(irq, f"the doorbell IRQ of shared memory '{sh.name}'")


def _check_shmem_maps(c: Checker, s: SystemSpec) -> None:
    """Shared memory: unique names, known VMs, each VM once."""
    sh_names: dict[str, str] = {}
    for sh in s.shmem:
        if sh.name in sh_names:
            c.error(join(sh.path, "name"), f"duplicate shared-memory name '{sh.name}' (also {sh_names[sh.name]})")
        sh_names.setdefault(sh.name, join(sh.path, "name"))
        seen_vms: dict[str, str] = {}
        for mp in sh.maps:
            if s.vm(mp.vm) is None:
                c.error(join(mp.path, "vm"), f"unknown VM '{mp.vm}'")
            elif mp.vm in seen_vms:
                c.error(join(mp.path, "vm"), f"VM '{mp.vm}' is listed twice (also {seen_vms[mp.vm]})")
            seen_vms.setdefault(mp.vm, join(mp.path, "vm"))
            c.aligned(join(mp.path, "ipa"), mp.ipa, "IPA")


def _check_ipa_map(c: Checker, s: SystemSpec, vm: VmSpec) -> None:
    p = s.platform
    items = [
        _IpaItem(what, r, vm.path) for what, r in p.gic.vm_frames(len(vm.cpus))
    ]
    if vm.console is not None:
        items.append(_IpaItem("the console page", Range(vm.console.ipa, PAGE), join(vm.path, "console")))
    for j, mem in enumerate(vm.memory):
        items.append(_IpaItem(f"memory[{j}]", Range(mem.ipa, mem.size), join(mem.path, "ipa")))
    for dev_name in dict.fromkeys(vm.devices):
        dev = p.device(dev_name)
        if dev is not None:
            path = f"{vm.path}.devices[{vm.devices.index(dev_name)}]"
            items.append(_IpaItem(f"device '{dev_name}'", dev.pages, path, device=True))
    for sh in s.shmem:
        for mp in sh.maps:
            if mp.vm == vm.name:
                items.append(_IpaItem(f"shared memory '{sh.name}'", Range(mp.ipa, sh.size), join(mp.path, "ipa")))
    items += [_IpaItem(what, r, path) for m in mechanisms.registered() if m.ipa_items is not None
              for what, r, path in m.ipa_items(s, vm)]
    for i, b in enumerate(items):
        if b.range.end > 1 << IPA_BITS and not b.what.startswith("memory"):
            c.error(b.path, f"IPA range {b.range} exceeds the {IPA_BITS}-bit IPA space")
        for a in items[:i]:
            if a.range.overlaps(b.range) and not (a.device and b.device):
                c.error(b.path, f"{b.what} at IPA {b.range} collides with {a.what} at IPA {a.range} "
                                f"in VM '{vm.name}'")
                break


def _check_boot(c: Checker, vm: VmSpec, guest_sources: Path | None) -> None:
    p = vm.path
    if vm.type == "linux":
        for key in ("guest", "image", "params"):
            if getattr(vm, key):
                c.error(join(p, key), f"'{key}' is only valid for bare-metal VMs")
        if vm.kernel is None:
            c.error(p, f"Linux VM '{vm.name}' needs a 'kernel'")
    else:
        for key in ("kernel", "initrd") if vm.type == "image" else ("kernel", "initrd", "bootargs"):
            if getattr(vm, key) is not None:
                c.error(join(p, key), f"'{key}' is only valid for Linux VMs (add 'type: linux')")
        if vm.type == "image" and vm.params:
            c.error(join(p, "params"), "an 'image' VM gets a device tree in x0, not a parameter block")
        if vm.guest is None and vm.image is None:
            c.error(p, f"{'image' if vm.type == 'image' else 'bare-metal'} VM '{vm.name}' needs one of 'guest' "
                       f"or 'image'")
        elif vm.guest is not None and vm.image is not None:
            c.error(join(p, "image"), "give either 'guest' or 'image', not both")
        elif vm.guest is not None and guest_sources is not None and (guest_sources / "Makefile").is_file():
            if not (guest_sources / vm.guest).is_dir():
                known = sorted(d.name for d in guest_sources.iterdir() if d.is_dir() and not d.name.startswith("."))
                c.error(join(p, "guest"), f"unknown guest '{vm.guest}'; guests/ has: {', '.join(known) or 'none'}")
    for key in ("kernel", "initrd", "image"):
        f: Path | None = getattr(vm, key)
        if f is None or (key == "initrd" and vm.type != "linux"):
            continue
        if not f.exists():
            c.error(join(p, key), f"file not found: {f}")
        elif not f.is_file():
            c.error(join(p, key), f"not a regular file: {f}")
    if vm.entry is not None:
        if vm.entry % 4:
            c.error(join(p, "entry"), f"entry 0x{vm.entry:x} is not 4-byte aligned")
        elif not any(Range(m.ipa, m.size).contains(Range(vm.entry, 4)) for m in vm.memory):
            c.error(join(p, "entry"), f"entry 0x{vm.entry:x} is not inside the VM's memory")
