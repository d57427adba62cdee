# SPDX-License-Identifier: Apache-2.0
"""The shape of a toolchain mechanism (docs/ARCHITECTURE.md "Mechanisms").

A mechanism (page coloring, shared I/O, memory bandwidth, QoS-400, PCI, DMA
isolation, interrupt delivery, DSU L3 ways) is one module of
``bulkhead/config/`` that exports a :class:`Mechanism` descriptor,
``MECHANISM``, which :mod:`bulkhead.config.mechanisms` finds: adding one is
adding its module. Each stage of the pipeline runs every mechanism's hook of
that stage in ``rank`` order and names none: the schema (``parse_*``,
``*_keys``), the semantic checks (``check_platform``, ``check``,
``ipa_items``), the layout (``reserved_ram``, ``guest_params``; a
mechanism's own plan is its module's, e.g. ``bandwidth.plan``, which its
other hooks call), ``config.c`` (``limits``, ``emit_*``) and the build's
features (``features``, the C files each decides, and ``needs``): a
mechanism's C is new files too, which only its descriptor names. A mechanism without a hook says so with
``None``; tests/test_mechanisms.py checks that every hook is stated and
that the docs section exists.

A mechanism sits above the config base (``yamlpos``, ``model``, ``reader``,
``color``, this module) and below ``schema``, ``validate``, ``layout`` and
``generate``. Its C tables are written from the resolved system that
``layout`` computes, which it sees through the read-only views below
(:class:`SystemView`): so it needs nothing of a later stage.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from bulkhead.base.csource import CSource, Field
from bulkhead.base.errors import Diagnostic
from bulkhead.config.color import Colors
from bulkhead.config.model import MemSpec, Platform, Range, ShmemSpec, SystemSpec, VmSpec
from bulkhead.config.reader import Reader
from bulkhead.config.yamlpos import YMap, YNode


class MemView(Protocol):
    """A placed memory region (bulkhead.layout.placement.MemRegion)."""

    @property
    def colors(self) -> Colors | None: ...


class PciFunctionView(Protocol):
    """A VM's PCI function as planned (bulkhead.config.pci.Function)."""

    @property
    def label(self) -> str: ...
    @property
    def bdf(self) -> int: ...
    @property
    def vendor(self) -> int: ...
    @property
    def device(self) -> int: ...
    @property
    def spi(self) -> int: ...
    @property
    def doorbell(self) -> int: ...
    @property
    def stream_id(self) -> int: ...  # its requester ID at the root complex: the ITS DeviceID too


class VmView(Protocol):
    """A resolved VM (bulkhead.layout.placement.Vm)."""

    @property
    def index(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def cpus(self) -> tuple[int, ...]: ...
    @property
    def spec(self) -> VmSpec: ...
    @property
    def memory(self) -> Sequence[MemView]: ...
    @property
    def pt_colors(self) -> Colors | None: ...
    @property
    def pci(self) -> Sequence[PciFunctionView]: ...
    @property
    def pci_window(self) -> Range | None: ...


class ShmemView(Protocol):
    """A placed shared-memory region (bulkhead.layout.placement.Shmem)."""

    @property
    def colors(self) -> Colors | None: ...


class PoolView(Protocol):
    """The recoloring pool's span (bulkhead.config.coloring.Span)."""

    @property
    def colors(self) -> Colors: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def pages(self) -> int: ...


class SystemView(Protocol):
    """The resolved system (bulkhead.layout.placement.System)."""

    @property
    def spec(self) -> SystemSpec: ...
    @property
    def platform(self) -> Platform: ...
    @property
    def vms(self) -> Sequence[VmView]: ...
    @property
    def shmems(self) -> Sequence[ShmemView]: ...
    @property
    def pool(self) -> PoolView | None: ...
    @property
    def hyp_color_pa(self) -> int: ...


@dataclass(frozen=True)
class Need:
    """One reason ``feature`` must be built: ``who`` ("vm rt", "the
    configuration") ``why`` ("is regulated (bandwidth)")."""

    feature: str
    who: str
    why: str

    def error(self) -> str:
        return f"{self.who} {self.why}, and this build leaves it out ({self.feature}=0 in features.h)"


Keys = Mapping[str, YNode]  # a section's keys as the schema read them (Reader.mapping)
Region = MemSpec | ShmemSpec  # a VM's memory region or a shared region (parse_region returns its kind)
AddToVm = Callable[[VmSpec], VmSpec]  # what a VM's device entry adds to the VM (parse_device)
# a limit the hypervisor's C shares, which config.c asserts: (its macro, the
# header defining it, the toolchain's value, where the toolchain has it)
Limit = tuple[str, str, int, str]


@dataclass(frozen=True)
class Mechanism:
    """What a mechanism offers each stage; every hook is given, None when it
    has none (its C, its feature...)."""

    name: str  # its module's: bulkhead/config/<name>.py
    rank: int  # its place in every stage's order (errors, C tables, members): lower first
    docs: str  # its docs page, and section: "docs/coloring.md" or "docs/dma.md#pci"
    # the features.h names it decides, each with its C files (paths or globs
    # under hypervisor/), which a build without the feature leaves out
    # (features.mk FEATURES_UNUSED)
    features: Mapping[str, tuple[str, ...]]
    # parse: the keys it owns in the platform file, the system file, a VM; the
    # schema reads them after its own and hands them over
    platform_keys: tuple[str, ...]
    system_keys: tuple[str, ...]
    vm_keys: tuple[str, ...]
    region_keys: tuple[str, ...]  # of a VM's memory region and a shared region (shmem)
    device_keys: tuple[str, ...]  # of a VM's device entry (devices[j]: {name, ...})
    parse_platform: Callable[[Reader, Keys, Platform], Platform] | None
    parse_system: Callable[[Reader, Keys, SystemSpec], SystemSpec] | None
    parse_vm: Callable[[Reader, Keys, VmSpec, Platform], VmSpec] | None
    parse_region: Callable[[Reader, Keys, Region], Region] | None
    # a device entry: check_device sees it before its keys are checked (a key
    # it refuses by name); parse_device reads its keys (the device's name, the
    # entry's path) where the entry is, and says what they add to the VM
    check_device: Callable[[Reader, YMap, str], None] | None
    parse_device: Callable[[Reader, Keys, str, str], AddToVm] | None
    # check: the platform's diagnostics; the system's (errors, warnings)
    check_platform: Callable[[Platform], list[Diagnostic]] | None
    check: Callable[[SystemSpec], tuple[list[Diagnostic], list[Diagnostic]]] | None
    # what it maps in a VM's IPA space, (what, range, key path), checked
    # against the rest of the VM's map
    ipa_items: Callable[[SystemSpec, VmSpec], list[tuple[str, Range, str]]] | None
    # plan (layout): RAM nothing may be placed in; a bare-metal VM's
    # parameters (the parameter block, after vm=)
    reserved_ram: Callable[[Platform], list[Range]] | None
    guest_params: Callable[[Platform, VmSpec], list[tuple[str, str]]] | None
    # emit C (config.c, hypervisor/core/config/config.h): the limits it
    # shares; its tables and struct cfg_platform members; tables other tables
    # name (before the VMs'); a VM's tables and its struct cfg_vm members;
    # the system's tables and its struct cfg_system members (a VM's
    # ("flags", "CFG_VM_X") is or-ed into its flags)
    limits: tuple[Limit, ...]
    emit_platform: Callable[[CSource, Platform], list[Field]] | None
    emit_tables: Callable[[CSource, SystemView], None] | None
    emit_vm: Callable[[CSource, SystemView, VmView], list[Field]] | None
    emit_system: Callable[[CSource, SystemView], list[Field]] | None
    # feature: why the build must contain its features (features.h)
    needs: Callable[[SystemView], list[Need]] | None


HOOKS = ("parse_platform", "parse_system", "parse_vm", "parse_region", "check_device", "parse_device",
         "check_platform", "check", "ipa_items", "reserved_ram", "guest_params", "emit_platform", "emit_tables",
         "emit_vm", "emit_system", "needs")
