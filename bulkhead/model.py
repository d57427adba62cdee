# SPDX-License-Identifier: Apache-2.0
"""Typed, position-carrying description of a platform and a system config.

These are what :mod:`bulkhead.schema` produces from YAML: values are checked
for type and syntax but not yet for consistency (:mod:`bulkhead.validate`).
Every object keeps its key path (``vms[1].cpus``); :class:`Locs` maps key
paths to file positions so later checks can point at the right line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from bulkhead.errors import Diagnostic, Mark

KiB = 1 << 10
MiB = 1 << 20
GiB = 1 << 30
PAGE = 4 * KiB
IPA_BITS = 39
MAX_CPUS = 8  # CFG_MAX_CPUS in hypervisor/core/config.h
PARAMS_MAX = PAGE
DTB_MAX = 64 * KiB

VmType = Literal["linux", "baremetal"]
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


# --- platform -------------------------------------------------------------


@dataclass(frozen=True)
class QemuSpec:
    binary: str
    machine: str
    cpu: str
    memory: int


@dataclass(frozen=True)
class GicSpec:
    version: int
    gicd: int
    gicr: int
    gicr_stride: int
    spis: int
    maintenance_irq: int

    @property
    def spi_range(self) -> range:
        return range(32, 32 + self.spis)


@dataclass(frozen=True)
class TimerSpec:
    hyp_irq: int
    virt_irq: int
    phys_irq: int
    secure_irq: int


@dataclass(frozen=True)
class UartSpec:
    base: int
    irq: int


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

    @property
    def range(self) -> Range:
        return Range(self.base, self.size)

    @property
    def pages(self) -> Range:
        """The 4 KiB pages the device occupies (what stage 2 maps)."""
        return self.range.pages()


@dataclass(frozen=True)
class Platform:
    name: str
    file: Path
    display: str
    data: bytes
    qemu: QemuSpec
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

    @property
    def ncpus(self) -> int:
        return len(self.mpidr)

    def device(self, name: str) -> PlatformDevice | None:
        for dev in self.devices:
            if dev.name == name:
                return dev
        return None


# --- system config -------------------------------------------------------


@dataclass(frozen=True)
class MemSpec:
    ipa: int
    size: int
    pa: int | None
    path: str  # vms[i].memory[j]


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

    def vm(self, name: str) -> VmSpec | None:
        for vm in self.vms:
            if vm.name == name:
                return vm
        return None
