# SPDX-License-Identifier: Apache-2.0
"""Generates the device tree source a Linux VM boots with."""

from __future__ import annotations

from bulkhead.config import interrupts, shared_disk, shared_io
from bulkhead.config.model import GIC_FRAME, PAGE, VGICR_STRIDE, Platform, PlatformPci, Range
from bulkhead.config.pci import Function
from bulkhead.layout.placement import System, Vm

APB_PCLK_HZ = 24_000_000
IRQ_EDGE_RISING = 1
IRQ_LEVEL_HIGH = 4
GICD_SIZE = 0x10000
ITS_SIZE = 0x20000  # the ITS's control and translation frames (GITS_TRANSLATER in the second)


def _cells64(value: int) -> str:
    return f"0x{value >> 32:x} 0x{value & 0xFFFFFFFF:x}"


def _reg(base: int, size: int) -> str:
    return f"<{_cells64(base)} {_cells64(size)}>"


def _str(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _strlist(values: tuple[str, ...] | list[str]) -> str:
    return ", ".join(_str(v) for v in values)


def _spi(irq: int, flags: int) -> str:
    return f"<0 {irq - 32} {flags}>"


class _Dts:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 0

    def open(self, name: str, label: str | None = None) -> None:
        prefix = f"{label}: " if label else ""
        self.lines.append("\t" * self.depth + f"{prefix}{name} {{")
        self.depth += 1

    def close(self) -> None:
        self.depth -= 1
        self.lines.append("\t" * self.depth + "};")

    def prop(self, name: str, value: str | None = None) -> None:
        text = name if value is None else f"{name} = {value}"
        self.lines.append("\t" * self.depth + text + ";")

    def blank(self) -> None:
        self.lines.append("")

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def _gic(d: _Dts, system: System, vm: Vm) -> None:
    """The VM's virtual GIC: the platform's GIC version (GICv2: no virtual
    interface frames, the VM has no virtualization extensions)."""
    g = system.platform.gic
    if g.version == 2:
        d.open(f"interrupt-controller@{g.vgicd:x}", "gic")
        d.prop("compatible", _strlist(["arm,gic-400", "arm,cortex-a15-gic"]))
        d.prop("#interrupt-cells", "<3>")
        d.prop("#address-cells", "<0>")
        d.prop("interrupt-controller")
        d.prop("reg", f"{_reg(g.vgicd, GIC_FRAME)}, {_reg(g.vgicc, 2 * GIC_FRAME)}")
        d.close()
        return
    d.open(f"intc@{g.vgicd:x}", "gic")
    d.prop("compatible", _str("arm,gic-v3"))
    d.prop("#interrupt-cells", "<3>")
    d.prop("#address-cells", "<2>")
    d.prop("#size-cells", "<2>")
    d.prop("ranges")
    d.prop("interrupt-controller")
    d.prop("#redistributor-regions", "<1>")
    gicr_size = len(vm.cpus) * VGICR_STRIDE
    d.prop("reg", f"{_reg(g.vgicd, GICD_SIZE)}, {_reg(g.vgicr, gicr_size)}")
    if _msi(vm):
        # its virtual ITS (docs/interrupts.md): where the platform's is
        d.blank()
        d.open(f"its@{g.its:x}", "its")
        d.prop("compatible", _str("arm,gic-v3-its"))
        d.prop("msi-controller")
        d.prop("#msi-cells", "<1>")
        d.prop("reg", _reg(g.its, ITS_SIZE))
        d.close()
    d.close()


def _msi(vm: Vm) -> bool:
    """Whether some PCI function of the VM shows MSI/MSI-X (docs/pci.md)."""
    return any(f.doorbell for f in vm.pci)


def _pci_host(d: _Dts, h: PlatformPci, funcs: tuple[Function, ...], window: Range, gic_version: int,
              msi: bool) -> None:
    """The VM's filtered ECAM as a generic ECAM host bridge (Linux
    pci-host-generic): its bus range, one 32-bit memory window (the VM's BAR
    window, IPA = PA), an interrupt-map for its functions' INTx only and,
    with ``msi``, an msi-map to its virtual ITS (ITS DeviceID = requester
    ID over the bus range)."""
    ecam = h.vm_ecam_range
    d.open(f"pcie@{ecam.base:x}")
    d.prop("compatible", _str("pci-host-ecam-generic"))
    d.prop("device_type", _str("pci"))
    d.prop("#address-cells", "<3>")
    d.prop("#size-cells", "<2>")
    d.prop("reg", _reg(ecam.base, ecam.size))
    d.prop("bus-range", f"<0x{h.bus_first:x} 0x{h.bus_last:x}>")
    d.prop("linux,pci-domain", "<0>")
    d.prop("ranges", f"<0x2000000 {_cells64(window.base)} {_cells64(window.base)} {_cells64(window.size)}>")
    d.prop("dma-coherent")
    d.prop("#interrupt-cells", "<1>")
    with_pin = [f for f in funcs if f.pin and f.spi]
    parent = "0x0 0x0 " if gic_version == 3 else ""  # the GIC node's #address-cells
    if with_pin:
        d.prop("interrupt-map-mask", "<0xffff00 0x0 0x0 0x7>")
        d.prop("interrupt-map", ", ".join(
            f"<0x{f.bdf << 8:x} 0x0 0x0 0x{f.pin:x} &gic {parent}0x0 {f.spi - 32} {IRQ_LEVEL_HIGH}>" for f in with_pin))
    if msi:
        rid = h.bus_first << 8
        d.prop("msi-map", f"<0x{rid:x} &its 0x{rid:x} 0x{(h.bus_last - h.bus_first + 1) << 8:x}>")
    d.close()


def generate(system: System, vm: Vm) -> str:
    """DTS text for Linux VM ``vm``."""
    assert vm.linux is not None, "device trees are generated for Linux VMs only"
    p = system.platform
    d = _Dts()
    d.lines += [
        "// SPDX-License-Identifier: Apache-2.0",
        f"// Generated by bulkhead (bulkhead/gen_dts.py) for VM '{vm.name}'. Do not edit.",
        "/dts-v1/;",
        "",
    ]
    d.open("/")
    d.prop("#address-cells", "<2>")
    d.prop("#size-cells", "<2>")
    d.prop("interrupt-parent", "<&gic>")
    d.prop("compatible", _str("bulkhead,vm"))
    d.prop("model", _str(f"Bulkhead VM {vm.name}"))

    _chosen(d, vm)
    _memory(d, vm)
    _cpus(d, p, vm)
    d.blank()
    d.open("psci")
    d.prop("compatible", _strlist(["arm,psci-1.0", "arm,psci-0.2"]))
    d.prop("method", _str("hvc"))
    d.close()

    d.blank()
    _gic(d, system, vm)

    _timer_pmu(d, p, vm)
    _devices(d, vm)
    if vm.pci and vm.pci_window is not None and p.pci is not None:
        d.blank()
        _pci_host(d, p.pci, vm.pci, vm.pci_window, p.gic.version, _msi(vm))

    _shmem(d, system, vm)

    d.blank()
    d.open("hypervisor")
    d.prop("compatible", _str("bulkhead,hypervisor"))
    d.close()
    d.close()
    return d.text()


def _chosen(d: _Dts, vm: Vm) -> None:
    """/chosen: boot arguments, console, initrd."""
    assert vm.linux is not None
    d.blank()
    d.open("chosen")
    if vm.linux.bootargs is not None:
        d.prop("bootargs", _str(vm.linux.bootargs))
    if vm.console is not None:
        d.prop("stdout-path", _str(f"/pl011@{vm.console.ipa:x}"))
    if vm.linux.initrd is not None:
        d.prop("linux,initrd-start", f"<{_cells64(vm.linux.initrd.base)}>")
        d.prop("linux,initrd-end", f"<{_cells64(vm.linux.initrd.end)}>")
    if vm.pci:
        d.prop("linux,pci-probe-only", "<1>")  # keep the BARs the hypervisor assigned
    d.close()


def _memory(d: _Dts, vm: Vm) -> None:
    """The VM's memory regions."""
    for region in vm.memory:
        d.blank()
        d.open(f"memory@{region.ipa:x}")
        d.prop("device_type", _str("memory"))
        d.prop("reg", _reg(region.ipa, region.size))
        d.close()


def _cpus(d: _Dts, p: Platform, vm: Vm) -> None:
    """/cpus: one node per vCPU, started by PSCI."""
    d.blank()
    d.open("cpus")
    d.prop("#address-cells", "<1>")
    d.prop("#size-cells", "<0>")
    for i, cpu in enumerate(vm.cpus):
        # the MPIDR affinity the vCPU reads: its index, or, in direct mode
        # (docs/interrupts.md), its CPU's (hypervisor/core/vm/vcpu.h vcpu_vmpidr)
        aff = p.mpidr[cpu] & 0xFF00FFFFFF if vm.spec.interrupts == "direct" else i
        d.blank()
        d.open(f"cpu@{aff:x}")
        d.prop("device_type", _str("cpu"))
        d.prop("compatible", _str(f"arm,{p.qemu.cpu}" if p.qemu else "arm,armv8"))
        d.prop("reg", f"<0x{aff:x}>")
        d.prop("enable-method", _str("psci"))
        d.close()
    d.close()


def _timer_pmu(d: _Dts, p: Platform, vm: Vm) -> None:
    """The generic timer's PPIs and the guest PMU."""
    d.blank()
    d.open("timer")
    d.prop("compatible", _str("arm,armv8-timer"))
    t = p.timer
    ppis = ", ".join(f"<1 {irq - 16} {IRQ_LEVEL_HIGH}>" for irq in (t.secure_irq, t.phys_irq, t.virt_irq, t.hyp_irq))
    d.prop("interrupts", ppis)
    d.prop("always-on")
    d.close()

    # a direct VM's PMU overflow is a spare PPI (docs/interrupts.md "Emulated sources")
    pmu = interrupts.pmu_irq(p, vm.spec) if vm.spec.interrupts == "direct" else p.pmu_irq
    if pmu:
        # the counters the hypervisor leaves to the VM (PMCR_EL0.N), its
        # overflow PPI (hypervisor/core/vpmu/vpmu.c)
        d.blank()
        d.open("pmu")
        d.prop("compatible", _str("arm,armv8-pmuv3"))
        d.prop("interrupts", f"<1 {pmu - 16} {_soft_flags(vm)}>")
        d.close()


def _soft_flags(vm: Vm) -> int:
    """The trigger of an interrupt the hypervisor emulates (the virtual
    UART's, the guest PMU's): in a direct VM a spare interrupt it keeps
    edge-triggered (docs/interrupts.md "Emulated sources"), where a level
    in the tree would make Linux's GICv3 driver fail its trigger check."""
    return IRQ_EDGE_RISING if vm.spec.interrupts == "direct" else IRQ_LEVEL_HIGH


def _devices(d: _Dts, vm: Vm) -> None:
    """The APB clock, the virtual console and the passthrough MMIO devices."""
    d.blank()
    d.open("apb-pclk", "apb_pclk")
    d.prop("compatible", _str("fixed-clock"))
    d.prop("#clock-cells", "<0>")
    d.prop("clock-frequency", f"<{APB_PCLK_HZ}>")
    d.prop("clock-output-names", _str("clk24mhz"))
    d.close()

    if vm.console is not None:
        d.blank()
        d.open(f"pl011@{vm.console.ipa:x}")
        d.prop("compatible", _strlist(["arm,pl011", "arm,primecell"]))
        d.prop("reg", _reg(vm.console.ipa, PAGE))
        d.prop("interrupts", _spi(vm.console.irq, _soft_flags(vm)))
        d.prop("clocks", "<&apb_pclk &apb_pclk>")
        d.prop("clock-names", _strlist(["uartclk", "apb_pclk"]))
        d.close()

    for dev in sorted(vm.mmio, key=lambda dv: dv.ipa):
        d.blank()
        d.open(f"{dev.name}@{dev.ipa:x}")
        d.prop("compatible", _strlist(list(dev.compatible)))
        d.prop("reg", _reg(dev.ipa, dev.size))
        if dev.irqs:
            d.prop("interrupts", ", ".join(_spi(irq, IRQ_LEVEL_HIGH) for irq in dev.irqs))
        if dev.amba:
            d.prop("clocks", "<&apb_pclk>")
            d.prop("clock-names", _str("apb_pclk"))
        d.close()


def _shmem(d: _Dts, system: System, vm: Vm) -> None:
    """Shared memory: reserved regions and their shmem nodes (a virtio
    client's region is its device's, the hypervisor's: not shown)."""
    bridged = {shared_io.virtio_region(system.spec.io, vm.name), shared_disk.virtio_region(system.spec.disk, vm.name)}
    shown = [(i, m) for i, m in enumerate(vm.shmem) if m.name not in bridged]
    if shown:
        d.blank()
        d.open("reserved-memory")
        d.prop("#address-cells", "<2>")
        d.prop("#size-cells", "<2>")
        d.prop("ranges")
        for i, m in shown:
            d.blank()
            d.open(f"shmem@{m.ipa:x}", f"shmem{i}")
            d.prop("reg", _reg(m.ipa, m.size))
            d.prop("no-map")
            d.close()
        d.close()
        for i, m in shown:
            d.blank()
            d.open(f"bulkhead-shmem@{m.ipa:x}")
            d.prop("compatible", _str("bulkhead,shmem"))
            d.prop("memory-region", f"<&shmem{i}>")
            d.prop("bulkhead,name", _str(m.name))
            d.prop("bulkhead,index", f"<{i}>")
            if m.doorbell_irq:
                d.prop("interrupts", _spi(m.doorbell_irq, IRQ_EDGE_RISING))
            d.close()
    # the hypervisor's virtio-mmio transports (docs/io.md "VirtIO"); their
    # addresses are the VM's own IPAs (no IOMMU between)
    io, disk = system.spec.io, system.spec.disk
    transports = []
    if io is not None and shared_io.virtio_client(io, vm.name) is not None:
        transports.append((io.virtio_ipa, io.client_doorbell_irq))
    if disk is not None and shared_disk.virtio_client(disk, vm.name) is not None:
        transports.append((disk.virtio_ipa, disk.client_doorbell_irq))
    for ipa, irq in transports:
        d.blank()
        d.open(f"virtio_mmio@{ipa:x}")
        d.prop("compatible", _str("virtio,mmio"))
        d.prop("reg", _reg(ipa, shared_io.VIRTIO_SIZE))
        d.prop("interrupts", _spi(irq, IRQ_EDGE_RISING))
        d.prop("dma-coherent")
        d.close()
