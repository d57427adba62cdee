# SPDX-License-Identifier: Apache-2.0
"""Typed, position-carrying description of a platform and a system config.

These are what :mod:`bulkhead.config.schema` produces from YAML: values are checked
for type and syntax but not yet for consistency (:mod:`bulkhead.config.validate`).
Every object keeps its key path (``vms[1].cpus``); :class:`Locs` maps key
paths to file positions so later checks can point at the right line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from bulkhead import drivers
from bulkhead.base.errors import Diagnostic, Mark
from bulkhead.config.bwspec import GUEST_PMU_PPI, PlatformBandwidth, VmBandwidthSpec
from bulkhead.drivers import gic as gic_drivers
from bulkhead.drivers import iommu

KiB = 1 << 10
MiB = 1 << 20
GiB = 1 << 30
PAGE = 4 * KiB
IPA_BITS = 39
PA_BITS = 48  # physical addresses (coloring bits, the cache model's row bits)
MAX_CPUS = 8  # CFG_MAX_CPUS in hypervisor/core/config/config.h (config.c asserts it: gen_c.SHARED)
MAX_RAM_BANKS = 4  # CFG_MAX_RAM in hypervisor/core/config/config.h (likewise)
PARAMS_MAX = PAGE
DTB_MAX = 64 * KiB

VmType = Literal["linux", "baremetal", "image"]
FaultPolicy = Literal["inject", "stop"]


def parent_path(path: str) -> str:
    """``vms[1].cpus[0]`` -> ``vms[1].cpus`` -> ``vms[1]`` -> ``vms`` -> ``''``."""
    if path.endswith("]"):
        return path[: path.rindex("[")]
    if "." in path:
        return path[: path.rindex(".")]
    return ""


@dataclass
class Locs:
    """Key path -> position of that key's value in one file."""

    file: str
    marks: dict[str, Mark] = field(default_factory=dict)

    def add(self, path: str, mark: Mark) -> None:
        self.marks.setdefault(path, mark)

    def at(self, path: str) -> Mark:
        """Position of ``path``, or of its nearest ancestor present in the file."""
        probe = path
        while True:
            if probe in self.marks:
                return self.marks[probe]
            if not probe:
                return Mark(self.file, 1, 1)
            probe = parent_path(probe)

    def diag(self, path: str, message: str) -> Diagnostic:
        return Diagnostic.at(self.at(path), path, message)


@dataclass(frozen=True)
class Range:
    """A half-open address range [base, base + size)."""

    base: int
    size: int

    @property
    def end(self) -> int:
        return self.base + self.size

    def overlaps(self, other: Range) -> bool:
        return self.base < other.end and other.base < self.end

    def contains(self, other: Range) -> bool:
        return self.base <= other.base and other.end <= self.end

    def pages(self) -> Range:
        """The smallest 4 KiB-aligned range covering this one."""
        base = self.base // PAGE * PAGE
        end = (self.end + PAGE - 1) // PAGE * PAGE
        return Range(base, end - base)

    def __str__(self) -> str:
        return f"0x{self.base:x}-0x{self.end - 1:x}"


def human_size(size: int) -> str:
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return f"{size >> shift}{unit}"
    return f"0x{size:x}"


class Resolved(Protocol):
    """What the section modules of the config stage (bandwidth, shared I/O)
    need of a laid-out system (:class:`bulkhead.layout.placement.System`, a later
    stage) for their reports and QEMU options: its spec and its platform.
    Structural, so that they never import the layout."""

    @property
    def spec(self) -> SystemSpec: ...

    @property
    def platform(self) -> Platform: ...


# --- platform -------------------------------------------------------------


@dataclass(frozen=True)
class QemuSpec:
    binary: str
    machine: str
    cpu: str
    memory: int
    args: tuple[str, ...] = ()  # further arguments for this machine
    serial: int = 0  # which of the machine's serial ports (-serial order) is the UART's
    # what -kernel gets: the ELF, or the flat arm64 Image (as a boot loader loads
    # it: QEMU then starts only CPU 0 and parks the others as for Linux)
    kernel: str = "elf"
    # a device tree QEMU passes in x0 (-dtb, a path under the repository), as
    # the board's firmware does; None: none
    dtb: str | None = None


GIC_FRAME = 0x1000  # a GICv2 register page
GICD_SPAN = 0x10000  # what a VM's distributor traps
# a VM's GICv3 redistributor: RD and SGI frames, whatever the physical
# stride (a GICv4's has VLPI frames too): VGICR_STRIDE in core/vgic/vgic_v3.c
VGICR_STRIDE = 0x20000


@dataclass(frozen=True)
class GicSpec:
    """The physical GIC; VMs get a virtual GIC of the same version.

    GICv3: ``gicd``, ``gicr``/``gicr_stride``; VMs see their GICD and GICRs
    at ``vgicd``/``vgicr`` (by default the same addresses). GICv2 (GIC-400): ``gicd``, ``gicc``, ``gich``,
    ``gicv``, ``page_stride`` (where the second 4 KiB page of GICC/GICV
    lies: 0x1000, or 0x10000 where each page is aliased over 64 KiB); VMs see
    their distributor at ``vgicd`` and their CPU interface (the GICV frame)
    at ``vgicc``.
    """
    version: int
    gicd: int
    spis: int
    maintenance_irq: int
    gicr: int = 0
    gicr_stride: int = 0
    gicc: int = 0
    gich: int = 0
    gicv: int = 0
    page_stride: int = GIC_FRAME
    vgicd: int = 0
    vgicc: int = 0
    vgicr: int = 0  # GICv3: where VMs see their redistributors (``vgicd`` their distributor)
    driver: str = ""  # ``gic.driver`` (bulkhead/drivers/gic/); "": gicv<version>
    # SPIs no device drives (``spare_spis``): the hypervisor sets them pending
    # to deliver a direct VM's emulated interrupts (docs/interrupts.md)
    spare_spis: tuple[int, ...] = ()
    # PPIs no device drives (GICv3 ``spare_ppis``): a direct VM's guest PMU
    # overflow interrupt (docs/interrupts.md)
    spare_ppis: tuple[int, ...] = ()
    # GICv3 ``its``: the ITS's GITS_CTLR frame (its GITS_TRANSLATER page
    # follows, 64 KiB on); 0: none. A VM owning PCI functions sees its
    # virtual ITS at the same address (docs/interrupts.md)
    its: int = 0
    # GICv3 ``v4``: the GIC is a GICv4 (its ITS GITS_TYPER.Virtual, its
    # redistributors GICR_TYPER.VLPIS): builds with the ITS get the GICv4
    # direct injection and its tables (the GICV4 feature) only then
    v4: bool = False
    # GICv3 ``virq``: "software" where the machine leaves the GIC's virtual IRQ
    # line unconnected (a platform quirk, hypervisor/core/vgic/vgic_v3_virq.c)
    virq: str = "wired"

    @property
    def spi_range(self) -> range:
        return range(32, 32 + self.spis)

    def frames(self, ncpus: int) -> list[tuple[str, Range]]:
        """The physical register frames (for ``ncpus`` CPUs)."""
        if self.version == 3:
            return [("the GIC distributor", Range(self.gicd, GICD_SPAN)),
                    ("the GIC redistributors", Range(self.gicr, ncpus * self.gicr_stride))]
        two_pages = self.page_stride + GIC_FRAME
        return [("the GIC distributor", Range(self.gicd, GICD_SPAN)),
                ("the GIC CPU interface", Range(self.gicc, two_pages)),
                ("the GIC virtual interface control", Range(self.gich, GIC_FRAME)),
                ("the GIC virtual CPU interface", Range(self.gicv, two_pages))]

    def vm_frames(self, ncpus: int) -> list[tuple[str, Range]]:
        """What a VM with ``ncpus`` vCPUs sees of its virtual GIC (IPAs)."""
        if self.version == 3:
            return [("the virtual GIC distributor", Range(self.vgicd, GICD_SPAN)),
                    ("the virtual GIC redistributors", Range(self.vgicr, max(ncpus, 1) * VGICR_STRIDE))]
        return [("the virtual GIC distributor", Range(self.vgicd, GICD_SPAN)),
                ("the virtual GIC CPU interface", Range(self.vgicc, 2 * GIC_FRAME))]

    @property
    def driver_name(self) -> str:
        """Its driver: hypervisor/drivers/gic/<driver_name>.c."""
        return self.driver or f"gicv{self.version}"


@dataclass(frozen=True)
class TimerSpec:
    hyp_irq: int
    virt_irq: int
    phys_irq: int
    secure_irq: int


UART_DRIVERS = drivers.values("uart")  # bulkhead/drivers/uart/<driver>.py
GIC_VERSIONS = gic_drivers.versions()  # the architectures of bulkhead/drivers/gic/<driver>.py


@dataclass(frozen=True)
class UartSpec:
    base: int
    irq: int
    driver: str = "pl011"
    reg_shift: int = 2  # register i at base + (i << reg_shift) (bulkhead/drivers/uart/<driver>.py)
    reg_io_width: int = 4  # bytes per register access: 1 or 4


@dataclass(frozen=True)
class ConsoleSpec:
    ipa: int
    irq: int


@dataclass(frozen=True)
class PlatformDevice:
    name: str
    base: int
    size: int
    irqs: tuple[int, ...]
    compatible: tuple[str, ...]
    amba: bool
    path: str
    # a bus master that reads and writes memory itself (docs/qos.md "DMA
    # isolation"); without an SMMU it reaches every physical address.
    dma: bool = False
    # its SMMU stream IDs (Linux DT ``iommus``/``iommu-map``) and the SMMU
    # (``smmus[].name``; None: the platform's only SMMU) -- docs/dma.md
    stream_ids: tuple[int, ...] = ()
    smmu: str | None = None

    @property
    def range(self) -> Range:
        return Range(self.base, self.size)

    @property
    def pages(self) -> Range:
        """The 4 KiB pages the device occupies (what stage 2 maps)."""
        return self.range.pages()


@dataclass(frozen=True)
class ColoringSpec:
    """The platform's page-color model (``coloring:``; docs/coloring.md).

    Bit lists are ascending PA bit numbers; color number bit k <-> the k-th
    bit of the list.
    """

    llc_bits: tuple[int, ...]
    bank_bits: tuple[int, ...]
    l1_bits: tuple[int, ...]
    llc_size: int | None  # LLC geometry when given (llc: {size, ways, line})
    llc_ways: int | None
    llc_line: int | None
    path: str = "coloring"

    @staticmethod
    def _mask(bits: tuple[int, ...]) -> int:
        m = 0
        for b in bits:
            m |= 1 << b
        return m

    @property
    def llc_mask(self) -> int:
        return self._mask(self.llc_bits)

    @property
    def bank_mask(self) -> int:
        return self._mask(self.bank_bits)

    @property
    def l1_mask(self) -> int:
        return self._mask(self.l1_bits)

    @property
    def n_llc(self) -> int:
        return 1 << len(self.llc_bits)

    @property
    def n_bank(self) -> int:
        return 1 << len(self.bank_bits)


@dataclass(frozen=True)
class TimingSpec:
    """``model.timing:``: the timing model's parameters (docs/model.md
    "Timing model"); times in ns, bandwidth in MB/s."""

    cpi: float  # cycles per instruction (no memory stall)
    cpu_mhz: float  # core clock
    llc_hit_ns: float  # an access served by the LLC
    row_hit_ns: float  # a line fill from an open DRAM row
    row_empty_ns: float  # ... from a bank with no open row (or no bank model)
    row_conflict_ns: float  # ... closing another row first
    dram_mbps: float  # sustainable DRAM bandwidth: the queueing term's capacity
    window_ns: float  # the queueing term's window of modelled time
    l1d: tuple[int, int, int] | None  # timing-only private L1D (size, ways, line) when model.l1d is absent


@dataclass(frozen=True)
class CacheModelSpec:
    """The cache/DRAM model of the QEMU plugin (``model:``; docs/model.md).

    The LLC geometry and the bank bits are the platform's ``coloring:`` ones.
    """

    replacement: Literal["lru", "random"]
    seed: int  # random replacement's fixed seed
    l1d: tuple[int, int, int] | None  # (size, ways, line) of each CPU's private L1D
    row_shift: int | None  # DRAM row = PA >> row_shift; None: no bank model
    path: str = "model"
    timing: TimingSpec | None = None  # the timing model (model.timing); None: counters only


@dataclass(frozen=True)
class DsuSpec:
    """``dsu:``: the DynamIQ Shared Unit's L3 way partitioning (docs/coloring.md
    "DSU L3 way partitioning"): its L3 ways and the way groups CLUSTERPARTCR_EL1
    hands to scheme IDs."""

    l3_ways: int
    groups: int
    path: str = "dsu"


QosAccess = Literal["mmio", "smc"]


@dataclass(frozen=True)
class QosRegulatorSpec:
    """A CoreLink QoS-400 regulator (``qos_regulators[i]``; docs/qos.md): the
    register block of one AXI slave interface of a NIC-400 interconnect, in
    front of the masters listed in ``devices``."""

    name: str
    base: int  # address of the block's read_qos register; qos_cntl is at +0x0C
    clock_hz: int  # the clock the interface counts transactions in
    transaction_bytes: int  # bytes one transaction moves (for MB/s <-> transactions/s)
    devices: tuple[str, ...]  # platform devices whose transactions enter through it
    access: QosAccess  # mmio: the hypervisor writes it; smc: through the firmware (TF-A SiP)
    path: str  # qos_regulators[i]


ECAM_BUS = 1 << 20  # one bus of an ECAM: 32 devices x 8 functions x 4 KiB


@dataclass(frozen=True)
class PlatformFunction:
    bdf: int
    vendor: int
    device: int
    pin: int
    name: str
    reserved: bool  # the hypervisor's (e.g. the host bridge's own function)
    path: str


@dataclass(frozen=True)
class PlatformPci:
    ecam: Range
    bus_first: int
    bus_last: int
    mmio32: Range
    mmio64: Range | None
    intx: tuple[int, int, int, int]  # SPIs of INTA-INTD of slot 0 (swizzle (slot + pin - 1) % 4)
    vm_ecam: int  # IPA of every VM's filtered ECAM
    qemu_bus: str
    functions: tuple[PlatformFunction, ...]
    path: str = "pci"

    @property
    def vm_ecam_range(self) -> Range:
        return Range(self.vm_ecam, (self.bus_last - self.bus_first + 1) * ECAM_BUS)


@dataclass(frozen=True)
class PciEntrySpec:
    """One ``vms[i].pci[j]`` as written."""

    bdf: int | None  # "BB:DD.F" (also a QEMU device's ``addr``)
    vendor: int | None  # "VVVV:DDDD"
    device: int | None
    qemu: str | None  # a QEMU model the run adds
    path: str
    on_dma_fault: str | None = None  # DMA fault policy (docs/dma.md): abort-device (default) | stop-vm
    msi: bool | None = None  # MSI/MSI-X shown (docs/pci.md); None: where the platform has an ITS


@dataclass(frozen=True)
class PciBridgeSpec:
    """One ``pci_bridges[i]``: a bridge QEMU adds to the bus (docs/pci.md)."""

    bdf: int
    qemu: str  # pci-bridge | pcie-pci-bridge
    path: str


SmmuType = str  # a driver's compatible value (bulkhead/drivers/iommu/<driver>.py)


@dataclass(frozen=True)
class SmmuSpec:
    """An SMMU of the platform (``smmus[i]``; docs/dma.md): the hypervisor
    owns it and points the streams of each VM's devices at the VM's stage-2
    tables."""

    name: str
    type: SmmuType
    base: int
    size: int
    event_irq: int  # SMMUv3: the event queue's SPI; SMMU-500: the context fault interrupt
    gerror_irq: int  # SMMUv3: GERROR's SPI; SMMU-500: the global fault interrupt (may be the same)
    pcie: bool  # the PCIe root complex is behind it (StreamID = requester ID)
    sources: tuple[str, ...]  # where the values come from (cited)
    path: str  # smmus[i]
    # "always": the hypervisor drives it in every config (unknown streams
    # abort); "with-streams": only when a VM owns a stream on it (other
    # masters behind it, and a machine model without it, stay untouched)
    enable: str = "always"

    @property
    def range(self) -> Range:
        return Range(self.base, self.size)

    @property
    def sid_bits(self) -> int:
        """Stream ID width the hardware takes (its driver's; SMMU-500: 15-bit SMR ID field)."""
        return iommu.of_type(self.type).sid_bits


@dataclass(frozen=True)
class MethodSpec:
    """One boot-time method of the platform file: the ``method`` value, the
    driver it selects (bulkhead/drivers/<kind>/<driver>.py) and its keys' values."""

    method: str = "psci"
    driver: str = "psci"
    args: tuple[tuple[str, drivers.Value], ...] = ()  # (key, value) in the driver's params order


@dataclass(frozen=True)
class FirmwareSpec:
    """How the hypervisor starts the other CPUs and powers off (``cpu_enable:``,
    ``power_off:``; docs/boards/porting.md): PSCI over SMC unless the board
    has no PSCI firmware (the Raspberry Pi 4's spin table and PM watchdog)."""

    cpu_enable: MethodSpec = MethodSpec()
    power_off: MethodSpec = MethodSpec()


@dataclass(frozen=True)
class Platform:
    name: str
    board: str  # hypervisor/platform/<board>: its board code
    file: Path
    display: str
    data: bytes
    qemu: QemuSpec | None  # None: no QEMU model of the board (`run` refuses it)
    mpidr: tuple[int, ...]
    ram: Range
    hypervisor: Range
    staging: Range
    mmio: Range
    gic: GicSpec
    timer: TimerSpec
    uart: UartSpec
    console: ConsoleSpec
    devices: tuple[PlatformDevice, ...]
    locs: Locs = field(compare=False, repr=False)
    coloring: ColoringSpec | None = None
    bandwidth: PlatformBandwidth | None = None
    cachemodel: CacheModelSpec | None = None
    ram_banks: tuple[Range, ...] = ()  # every DRAM bank, `ram` first; () means (ram,)
    qos_regulators: tuple[QosRegulatorSpec, ...] = ()
    # firmware-reserved RAM (the device tree's /reserved-memory no-map
    # regions): nothing is placed over it and the hypervisor never maps it
    reserved: tuple[Range, ...] = ()
    # the core type of each CPU (``cpus: [{mpidr, type}]``, e.g. cortex-a55);
    # () when the platform's CPUs are not typed (one core type)
    cpu_types: tuple[str, ...] = ()
    dsu: DsuSpec | None = None  # DSU L3 way partitioning; None: none
    firmware: FirmwareSpec = field(default_factory=FirmwareSpec)

    def cpu_type(self, cpu: int) -> str:
        """The core type of CPU ``cpu`` ('' when the platform does not type its CPUs)."""
        return self.cpu_types[cpu] if self.cpu_types else ""

    @property
    def core_types(self) -> tuple[str, ...]:
        """The distinct core types, in CPU order."""
        return tuple(dict.fromkeys(self.cpu_types))
    pci: PlatformPci | None = None  # the PCIe host bridge (docs/dma.md "PCI")
    smmus: tuple[SmmuSpec, ...] = ()

    @property
    def ncpus(self) -> int:
        return len(self.mpidr)

    @property
    def banks(self) -> tuple[Range, ...]:
        """The DRAM banks (``ram:`` as a list; one bank otherwise). The first
        holds the hypervisor and the staging area."""
        return self.ram_banks or (self.ram,)

    def in_ram(self, r: Range) -> bool:
        """Whether ``r`` lies inside one bank."""
        return any(b.contains(r) for b in self.banks)

    def ram_text(self) -> str:
        return ", ".join(str(b) for b in self.banks)

    @property
    def pmu_irq(self) -> int | None:
        """The PMU overflow PPI VMs see (guests' PMUs and the regulator share the
        physical interrupt): the ``bandwidth.pmu_irq`` of the platform file, or
        the guest platform's PPI 23 where the board has one SPI per CPU; None
        without a bandwidth model."""
        if self.bandwidth is None:
            return None
        return self.bandwidth.pmu_irq or GUEST_PMU_PPI

    def device(self, name: str) -> PlatformDevice | None:
        for dev in self.devices:
            if dev.name == name:
                return dev
        return None

    @property
    def smmu(self) -> bool:
        """Whether the platform names an SMMU Bulkhead drives (docs/dma.md)."""
        return bool(self.smmus)

    def smmu_named(self, name: str | None) -> SmmuSpec | None:
        """The SMMU called ``name`` (None: the only one, if there is one)."""
        if name is None:
            return self.smmus[0] if len(self.smmus) == 1 else None
        return next((u for u in self.smmus if u.name == name), None)

    def smmu_of(self, dev: PlatformDevice) -> SmmuSpec | None:
        """The SMMU in front of ``dev``: None when it has no stream IDs."""
        return self.smmu_named(dev.smmu) if dev.stream_ids else None

    def regulator_of(self, device: str) -> QosRegulatorSpec | None:
        for reg in self.qos_regulators:
            if device in reg.devices:
                return reg
        return None


# --- system config -------------------------------------------------------


@dataclass(frozen=True)
class ColorSpec:
    """A color selection as written (``colors:``): LLC and bank color numbers
    (None: every color of that kind), or one raw ``mask``/``value`` pattern."""

    llc: tuple[int, ...] | None
    bank: tuple[int, ...] | None
    mask: int | None
    value: int | None
    path: str  # e.g. vms[i].colors


@dataclass(frozen=True)
class QosDirectionSpec:
    """One direction (read or write) of a device's ``qos:`` as written: the
    average rate in exactly one form, optional burstiness and peak."""

    raw: int | None  # ar_r/aw_r field value (12-bit fraction of a transaction per cycle)
    tps: int | None  # transactions per second
    mbps: int | None  # MB/s (10^6 bytes/s), at the regulator's transaction_bytes
    burst: int | None  # ar_b/aw_b: transactions (None: 1)
    peak: int | None  # ar_p/aw_p field value (8-bit fraction per cycle; None: 0xFF)
    path: str  # vms[i].devices[j].qos.read


@dataclass(frozen=True)
class DeviceQosSpec:
    """A passthrough device's ``qos:`` block (``vms[i].devices[j].qos``)."""

    device: str
    read: QosDirectionSpec | None
    write: QosDirectionSpec | None
    path: str  # vms[i].devices[j].qos


@dataclass(frozen=True)
class MemSpec:
    ipa: int
    size: int
    pa: int | None
    path: str  # vms[i].memory[j]
    colors: ColorSpec | None = None  # overrides the VM's colors


@dataclass(frozen=True)
class VmSpec:
    index: int
    name: str
    type: VmType
    cpus: tuple[int, ...]
    memory: tuple[MemSpec, ...]
    kernel: Path | None
    initrd: Path | None
    bootargs: str | None
    guest: str | None
    image: Path | None
    entry: int | None
    params: tuple[tuple[str, str], ...]
    console: ConsoleSpec | None
    devices: tuple[str, ...]
    on_fault: FaultPolicy
    path: str  # vms[i]
    colors: ColorSpec | None = None
    bandwidth: VmBandwidthSpec | None = None
    manager: bool = False  # may change budgets at run time (BH_HC_BW_SET)
    introspection: bool = False  # may learn host physical addresses (BH_HC_IPA_INFO, BH_HC_S2_INFO)
    mixed_core_types: bool = False  # may run on CPUs of different core types
    l3_ways: int | None = None  # DSU L3 ways of its own (a multiple of a way group)
    l3_groups: tuple[int, ...] | None = None  # or the DSU way groups by number
    ida: tuple[str, ...] = ()  # invalidation-driven allocation: "call", "period", "start"
    qos: tuple[DeviceQosSpec, ...] = ()  # QoS-400 settings of its passthrough devices
    pci: tuple[PciEntrySpec, ...] = ()  # PCI functions (docs/dma.md "PCI")
    # per passthrough device behind an SMMU: what a DMA fault does
    # ("abort-device" default, "stop-vm"); (device, policy, key path)
    dma_on_fault: tuple[tuple[str, str, str], ...] = ()
    # "emulated" (list registers) or "direct" (the guest owns the physical GIC
    # CPU interface, the hypervisor's events come through SDEI; docs/interrupts.md)
    interrupts: str = "emulated"
    # the first of the 256 physical LPIs its virtual ITS's events get, a VM
    # with PCI functions (bulkhead.config.interrupts.lpi_blocks); 0: none
    lpi_base: int = 0


@dataclass(frozen=True)
class ShmemMapSpec:
    vm: str
    ipa: int
    doorbell_irq: int | None
    path: str  # shmem[i].vms[j]


@dataclass(frozen=True)
class ShmemSpec:
    index: int
    name: str
    size: int
    pa: int | None
    maps: tuple[ShmemMapSpec, ...]
    path: str  # shmem[i]
    colors: ColorSpec | None = None


@dataclass(frozen=True)
class PoolSpec:
    """Spare memory for run-time recoloring (``recolor_pool``, docs/coloring.md)."""

    size: int
    colors: ColorSpec
    path: str  # recolor_pool


@dataclass(frozen=True)
class IoClientSpec:
    """A client of the shared I/O device (``io.clients[i]``; docs/io.md)."""

    vm: str
    queue: int  # slots per ring (each direction)
    weight: int  # round-robin weight: frames per round
    mac: bytes  # 6 bytes
    rate_cap: int | None  # frames/s, None: uncapped
    path: str  # io.clients[i]
    virtio: str | None = None  # "net": a virtio-mmio device bridged by the hypervisor (docs/io.md "VirtIO")


@dataclass(frozen=True)
class IoSpec:
    """The shared I/O device, its I/O VM and clients (``io:``; docs/io.md)."""

    device: str
    vm: str
    capacity: int  # frames/s the device (with the I/O VM) serves while anyone is backlogged
    mac: bytes
    ipa: int  # the client regions in the I/O VM, one after the other
    client_ipa: int  # each client's region in the client
    doorbell_irq: int  # I/O VM: doorbell_irq + i for client i
    client_doorbell_irq: int
    clients: tuple[IoClientSpec, ...]
    path: str = "io"
    legacy_frame_rate: bool = False  # given as the old key `frame_rate` (a warning)
    virtio_ipa: int = 0x0B00_0000  # a virtio client's transport page
    poll: bool = False  # the I/O VM busy-waits when idle instead of sleeping in WFI


@dataclass(frozen=True)
class DiskClientSpec:
    """A client of the shared disk (``disk.clients[i]``; docs/io.md "Shared disk")."""

    vm: str
    size: int  # bytes of its region (a multiple of 4 KiB)
    offset: int | None  # bytes into the disk where its region starts, None: laid out by the toolchain
    weight: int  # round-robin weight: requests per round
    queue: int  # slots per ring (each direction)
    path: str  # disk.clients[i]
    virtio: str | None = None  # "blk": a virtio-mmio device bridged by the hypervisor (docs/io.md "VirtIO")


@dataclass(frozen=True)
class DiskSpec:
    """The shared disk, its I/O VM and clients (``disk:``; docs/io.md)."""

    device: str
    vm: str
    size: int  # bytes of the disk (the image the run tooling creates)
    iops: int  # 4 KiB requests/s the I/O VM serves while anyone is backlogged (measured)
    mbps: int  # MB/s of 4 KiB sequential requests while anyone is backlogged (measured)
    ipa: int  # the client regions in the I/O VM, one after the other
    client_ipa: int  # each client's region in the client
    doorbell_irq: int  # I/O VM: doorbell_irq + i for client i
    client_doorbell_irq: int
    clients: tuple[DiskClientSpec, ...]
    path: str = "disk"
    virtio_ipa: int = 0x0B00_1000  # a virtio client's transport page (after io:'s)


@dataclass(frozen=True)
class SystemSpec:
    file: Path
    display: str
    data: bytes
    platform: Platform
    console_input: str | None  # None: default rule; "none": no console input
    vms: tuple[VmSpec, ...]
    shmem: tuple[ShmemSpec, ...]
    locs: Locs = field(compare=False, repr=False)
    # non-fatal findings of the checks (``bulkhead: warning: ...``), in file order
    warnings: list[Diagnostic] = field(default_factory=list, compare=False, repr=False)
    spare_sharing: bool = False  # system ``bandwidth: {spare_sharing}``
    io: IoSpec | None = None  # shared I/O device (``io:``)
    disk: DiskSpec | None = None  # shared disk (``disk:``)
    hypervisor_colors: ColorSpec | None = None  # self-coloring: colors reserved for the hypervisor
    dma_isolation: str | None = None  # "none": DMA-capable passthrough without an SMMU accepted; SMMUs off
    recolor_pool: PoolSpec | None = None  # spare memory for recoloring
    # the system boots through secure firmware that answers SDEI with Bulkhead's
    # event table (docs/interrupts.md): what `interrupts: direct` needs
    sdei: bool = False
    pci_bridges: tuple[PciBridgeSpec, ...] = ()  # bridges QEMU adds to the PCI bus (docs/pci.md)

    def vm(self, name: str) -> VmSpec | None:
        for vm in self.vms:
            if vm.name == name:
                return vm
        return None
