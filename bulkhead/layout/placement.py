# SPDX-License-Identifier: Apache-2.0
"""Physical placement: the resolved system the generators consume.

Allocates host-physical memory for regions without ``pa`` (first fit),
places each VM's boot images in its IPA space (Linux: kernel / initrd / DTB;
bare-metal: image / parameter block), sizes the stage-2 table pools, and
packs the images into the platform's staging window for QEMU's loader.
"""

from __future__ import annotations

import dataclasses
import hashlib
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from bulkhead.base.errors import BuildError, ConfigError, Diagnostic
from bulkhead.config import coloring, dma, mechanisms, pci
from bulkhead.config.color import Colors
from bulkhead.config.coloring import Span
from bulkhead.config.model import (
    DTB_MAX,
    PAGE,
    PARAMS_MAX,
    ConsoleSpec,
    FaultPolicy,
    MiB,
    Platform,
    Range,
    SystemSpec,
    VmSpec,
    VmType,
    human_size,
)
from bulkhead.config.reader import join
from bulkhead.layout import elf

BLOCK = 2 * MiB
ARM64_MAGIC = b"ARM\x64"


@dataclass(frozen=True)
class MemRegion:
    ipa: int
    pa: int  # colored: the span start (its first page)
    size: int
    colors: Colors | None = None  # None: physically contiguous
    end: int = 0  # colored: end of the span (last page + 4 KiB)


@dataclass(frozen=True)
class Passthrough:
    name: str
    ipa: int
    pa: int
    size: int
    irqs: tuple[int, ...]
    compatible: tuple[str, ...]
    amba: bool


@dataclass(frozen=True)
class MmioMap:
    """A page-aligned stage-2 device mapping (devices sharing a page merged)."""

    name: str
    ipa: int
    pa: int
    size: int


@dataclass(frozen=True)
class VmImage:
    """One file copied into a VM at start."""

    name: str  # kernel | initrd | dtb | image | params
    dst_ipa: int
    size: int | None  # bytes copied; None until a guest binary is built
    limit: int  # bytes available at dst_ipa
    source: Path | None  # input file (kernel, initrd, image); None if generated or a guest
    guest: str | None  # guest name for guest: images
    path: str  # config key path, for errors


@dataclass(frozen=True)
class ShmemMap:
    index: int  # into System.shmems
    name: str
    ipa: int
    pa: int
    size: int
    doorbell_irq: int  # 0: none


@dataclass(frozen=True)
class LinuxBoot:
    kernel_ipa: int
    dtb_ipa: int
    initrd: Range | None
    bootargs: str | None


@dataclass(frozen=True)
class Vm:
    index: int
    name: str
    type: VmType
    cpus: tuple[int, ...]
    entry: int
    boot_arg: int
    on_fault: FaultPolicy
    memory: tuple[MemRegion, ...]
    mmio: tuple[Passthrough, ...]
    mmio_maps: tuple[MmioMap, ...]
    irqs: tuple[int, ...]
    images: tuple[VmImage, ...]
    shmem: tuple[ShmemMap, ...]
    console: ConsoleSpec | None
    pt_pages: int
    linux: LinuxBoot | None
    params_text: str | None
    spec: VmSpec
    pt_colors: Colors | None = None  # colored stage-2 tables: pt_pages pages of these colors from pt_pa
    pt_pa: int = 0
    llc_colors: int = 0  # bitmaps of the colors of the VM's RAM; 0: every color
    bank_colors: int = 0
    pci: tuple[pci.Function, ...] = ()  # PCI functions (docs/dma.md "PCI")
    pci_window: Range | None = None  # where the hypervisor puts their BARs (IPA = PA)

    @property
    def ram_bytes(self) -> int:
        return sum(m.size for m in self.memory)


@dataclass(frozen=True)
class Shmem:
    name: str
    pa: int
    size: int
    vms: tuple[str, ...]
    colors: Colors | None = None


@dataclass(frozen=True)
class System:
    spec: SystemSpec
    platform: Platform
    vms: tuple[Vm, ...]
    shmems: tuple[Shmem, ...]
    console_input: int  # VM index; -1: none
    config_hash: int
    coloring: coloring.Report | None = None  # when any memory is colored
    hyp_color_pa: int = 0  # self-coloring: span start of the hypervisor's colored frames (0: none)
    pool: Span | None = None  # spare memory for recoloring (recolor_pool)

    @property
    def warnings(self) -> list[Diagnostic]:
        """Non-fatal findings, in file order (printed as ``bulkhead: warning: ...``)."""
        return sorted(dict.fromkeys(self.spec.warnings), key=Diagnostic.sort_key)

    def vm(self, name: str) -> Vm | None:
        for vm in self.vms:
            if vm.name == name:
                return vm
        return None


@dataclass(frozen=True)
class StagedImage:
    vm: str
    vm_index: int
    name: str
    file: Path
    size: int
    src_pa: int
    dst_ipa: int


def align_up(value: int, align: int) -> int:
    return (value + align - 1) // align * align


def align_down(value: int, align: int) -> int:
    return value // align * align


def config_hash(config_bytes: bytes, platform_bytes: bytes) -> int:
    """Low 64 bits of SHA-256(config file bytes + platform file bytes)."""
    digest = hashlib.sha256(config_bytes + platform_bytes).digest()
    return int.from_bytes(digest[-8:], "big")


class _Allocator:
    """First-fit allocation of host-physical RAM."""

    def __init__(self, banks: Iterable[Range], reserved: Iterable[Range]) -> None:
        self.free = list(banks)  # first fit: the first bank first
        for r in reserved:
            self.take(r)

    def take(self, r: Range) -> None:
        out: list[Range] = []
        for f in self.free:
            if not f.overlaps(r):
                out.append(f)
                continue
            if f.base < r.base:
                out.append(Range(f.base, r.base - f.base))
            if r.end < f.end:
                out.append(Range(r.end, f.end - r.end))
        self.free = out

    def alloc(self, size: int, align: int) -> int | None:
        for f in self.free:
            base = align_up(f.base, align)
            if base + size <= f.end:
                self.take(Range(base, size))
                return base
        return None

    def largest(self) -> int:
        return max((f.size for f in self.free), default=0)


def resolve(s: SystemSpec) -> System:
    """Place everything; ``s`` must have passed :func:`validate.check_system`."""
    p = s.platform
    diags: list[Diagnostic] = []

    # Host-physical allocation: explicit PAs first, then contiguous memory in
    # config order, then colored memory in what is left (see coloring.place).
    reqs = coloring.requests(s, {vm.index: _table_pages(s, vm) for vm in s.vms})
    colored = {r.key for r in reqs}
    explicit = [Range(m.pa, m.size) for vm in s.vms for j, m in enumerate(vm.memory)
                if m.pa is not None and ("mem", vm.index, j) not in colored]
    explicit += [Range(sh.pa, sh.size) for sh in s.shmem if sh.pa is not None and ("shmem", sh.index, 0) not in colored]
    # contiguous memory stays out of the spans of colored regions with an explicit pa
    reserved = [r for m in mechanisms.registered() if m.reserved_ram is not None for r in m.reserved_ram(p)]
    alloc = _Allocator(p.banks, [p.hypervisor, p.staging, *(r.pages() for r in p.reserved), *reserved,
                                 *explicit,
                                 *coloring.fixed_spans(reqs)])
    contiguous: list[Range] = []

    def place(size: int, ipa: int, path: str) -> int:
        align = BLOCK if size % BLOCK == 0 and ipa % BLOCK == 0 else PAGE
        pa = alloc.alloc(size, align)
        if pa is None:
            diags.append(s.locs.diag(path, f"no free RAM for {human_size(size)} "
                                           f"(largest free block: {human_size(alloc.largest())})"))
            return 0
        contiguous.append(Range(pa, size))
        return pa

    mem_pa = {
        (vm.index, j): m.pa if m.pa is not None else place(m.size, m.ipa, join(m.path, "size"))
        for vm in s.vms
        for j, m in enumerate(vm.memory)
        if ("mem", vm.index, j) not in colored
    }
    shmem_pa = {
        sh.index: sh.pa if sh.pa is not None else place(sh.size, 0, join(sh.path, "size"))
        for sh in s.shmem
        if ("shmem", sh.index, 0) not in colored
    }
    # colored memory: whatever RAM contiguous memory left (explicit spans included)
    colorable = _Allocator(p.banks, [p.hypervisor, p.staging, *(r.pages() for r in p.reserved),
                                     *reserved, *explicit, *contiguous]).free
    spans, color_diags = coloring.place(s, colorable, reqs)
    diags += color_diags
    if diags:
        raise ConfigError(sorted(diags, key=Diagnostic.sort_key))

    def span_of(key: coloring.SpanKey) -> coloring.Span:
        return spans[key]

    shmems = tuple(
        Shmem(sh.name, shmem_pa[sh.index], sh.size, tuple(mp.vm for mp in sh.maps))
        if ("shmem", sh.index, 0) not in colored else
        Shmem(sh.name, span_of(("shmem", sh.index, 0)).start, sh.size, tuple(mp.vm for mp in sh.maps),
              span_of(("shmem", sh.index, 0)).colors)
        for sh in s.shmem
    )

    vms = []
    model = p.coloring
    for vm in s.vms:
        memory = tuple(
            MemRegion(m.ipa, mem_pa[(vm.index, j)], m.size) if ("mem", vm.index, j) not in colored else
            MemRegion(m.ipa, span_of(("mem", vm.index, j)).start, m.size, span_of(("mem", vm.index, j)).colors,
                      span_of(("mem", vm.index, j)).end)
            for j, m in enumerate(vm.memory)
        )
        resolved = _resolve_vm(s, vm, memory, shmems, diags)
        pt = spans.get(("pt", vm.index, 0))
        llc, bank = coloring.bitmaps(model, [m.colors for m in memory])
        if pt is not None or llc or bank:
            resolved = dataclasses.replace(resolved, pt_colors=pt.colors if pt else None,
                                           pt_pa=pt.start if pt else 0, llc_colors=llc, bank_colors=bank)
        vms.append(resolved)
    if diags:
        raise ConfigError(sorted(diags, key=Diagnostic.sort_key))
    report = coloring.report(model, colorable, spans.values()) if model is not None and spans else None

    if s.console_input == "none":
        console_input = -1
    elif s.console_input is not None:
        console_input = next(vm.index for vm in s.vms if vm.name == s.console_input)
    else:
        console_input = next((vm.index for vm in s.vms if vm.console is not None), -1)
    hyp = spans.get(("hyp", 0, 0))
    return System(s, p, tuple(vms), shmems, console_input, config_hash(s.data, p.data), report,
                  hyp.start if hyp is not None else 0, spans.get(("pool", 0, 0)))


def _resolve_vm(
    s: SystemSpec, vm: VmSpec, memory: tuple[MemRegion, ...], shmems: tuple[Shmem, ...],
    diags: list[Diagnostic],
) -> Vm:
    p = s.platform
    mmio = []
    irqs: set[int] = set()
    for name in dict.fromkeys(vm.devices):
        dev = p.device(name)
        assert dev is not None  # validated
        mmio.append(Passthrough(dev.name, dev.base, dev.base, dev.size, dev.irqs, dev.compatible, dev.amba))
        irqs.update(dev.irqs)
    maps = tuple(
        ShmemMap(sh.index, sh.name, mp.ipa, shmems[sh.index].pa, sh.size, mp.doorbell_irq or 0)
        for sh in s.shmem
        for mp in sh.maps
        if mp.vm == vm.name
    )
    first = memory[0]
    images: list[VmImage] = []
    linux: LinuxBoot | None = None
    params_text: str | None = None
    if vm.type == "linux":
        linux, images = _place_linux(s, vm, first, diags)
        entry = vm.entry if vm.entry is not None else linux.kernel_ipa
        boot_arg = linux.dtb_ipa
    elif vm.type == "image":
        linux, images, entry = _place_image(s, vm, first, diags)
        boot_arg = linux.dtb_ipa
    else:
        entry = vm.entry if vm.entry is not None else first.ipa
        params_ipa = first.ipa + first.size - PAGE
        own = [kv for m in mechanisms.registered() if m.guest_params is not None for kv in m.guest_params(s.platform, vm)]
        params_text = "".join(f"{k}={v}\n" for k, v in (("vm", vm.name), *own, *vm.params))
        params_size = len(params_text.encode()) + 1
        if params_size > PARAMS_MAX:
            diags.append(s.locs.diag(join(vm.path, "params"),
                                     f"the parameter block is {params_size} bytes; the limit is {PARAMS_MAX}"))
        region = next(m for m in memory if m.ipa <= entry < m.ipa + m.size)
        limit_end = region.ipa + region.size
        if region is first:
            if entry >= params_ipa:
                diags.append(s.locs.diag(join(vm.path, "entry"), f"entry 0x{entry:x} is inside the parameter "
                                         f"block page (0x{params_ipa:x}), the last page of memory[0]"))
            limit_end = params_ipa
        image_path = join(vm.path, "image" if vm.image is not None else "guest")
        size = vm.image.stat().st_size if vm.image is not None else None
        img = VmImage("image", entry, size, max(limit_end - entry, 0), vm.image, vm.guest, image_path)
        if size is not None:
            _check_fits(s, img, diags)
        images = [img, VmImage("params", params_ipa, params_size, PAGE, None, None, join(vm.path, "params"))]
        boot_arg = params_ipa

    mmio_maps = merge_mmio(mmio)
    funcs = pci.plan(s).of(vm.name)
    irqs.update(f.spi for f in funcs if f.spi)
    window = pci.plan(s).windows.get(vm.name)
    return Vm(
        index=vm.index, name=vm.name, type=vm.type, cpus=vm.cpus, entry=entry, boot_arg=boot_arg,
        on_fault=vm.on_fault, memory=memory, mmio=tuple(mmio), mmio_maps=mmio_maps, irqs=tuple(sorted(irqs)),
        images=tuple(images), shmem=maps, console=vm.console, pt_pages=_table_pages(s, vm),
        linux=linux, params_text=params_text, spec=vm, pci=funcs, pci_window=window,
    )


def _ram_ranges(s: SystemSpec, vm: VmSpec) -> list[Range]:
    """What stage 2 maps as normal memory for ``vm``: its RAM and shared memory."""
    ranges = [Range(m.ipa, m.size) for m in vm.memory]
    ranges += [Range(mp.ipa, sh.size) for sh in s.shmem for mp in sh.maps if mp.vm == vm.name]
    return ranges


def _device_ranges(s: SystemSpec, vm: VmSpec) -> list[Range]:
    """What stage 2 maps as device memory for ``vm`` (its PCI BARs aside)."""
    p = s.platform
    devices = [dev for name in dict.fromkeys(vm.devices) if (dev := p.device(name)) is not None]
    ranges = [Range(d.ipa, d.size) for d in merge_mmio(
        Passthrough(d.name, d.base, d.base, d.size, d.irqs, d.compatible, d.amba) for d in devices)]
    ranges += [r for _, r in p.gic.vm_frames(len(vm.cpus))]
    if vm.console is not None:
        ranges.append(Range(vm.console.ipa, PAGE))
    return ranges


def _ipa_ranges(s: SystemSpec, vm: VmSpec) -> list[Range]:
    """Everything stage 2 maps for ``vm`` but its PCI BARs (what sizes its table pool)."""
    return _ram_ranges(s, vm) + _device_ranges(s, vm)


def _table_pages(s: SystemSpec, vm: VmSpec) -> int:
    """The VM's stage-2 table pool: its tables, its BARs', and the SMMU's
    view of its memory when it owns DMA streams (docs/dma.md)."""
    nfuncs = len(pci.plan(s).of(vm.name))
    n = pt_pages(_ipa_ranges(s, vm)) + pci.pt_extra(nfuncs)
    if any(st.vm == vm.name for st in dma.streams(s)):
        devices = _device_ranges(s, vm)
        window = pci.plan(s).windows.get(vm.name)
        if window is not None:
            devices.append(window)
        n += dma_view_pages(_ram_ranges(s, vm), devices)
        # + the level-2 and level-3 tables of the ITS doorbell page (MSI, core/mem/mem.c)
        n += 2 if any(f.doorbell for f in pci.plan(s).of(vm.name)) else 0
    return n


def merge_mmio(devices: Iterable[Passthrough]) -> tuple[MmioMap, ...]:
    """Page-round each device and merge devices that share a page."""
    maps: list[MmioMap] = []
    for dev in sorted(devices, key=lambda d: d.pa):
        pages = Range(dev.pa, dev.size).pages()
        if maps and maps[-1].pa + maps[-1].size > pages.base:
            last = maps[-1]
            end = max(last.pa + last.size, pages.end)
            maps[-1] = MmioMap(f"{last.name}+{dev.name}", last.ipa, last.pa, end - last.pa)
        else:
            maps.append(MmioMap(dev.name, pages.base, pages.base, pages.size))
    return tuple(maps)


def _check_fits(s: SystemSpec, img: VmImage, diags: list[Diagnostic]) -> bool:
    if img.size is not None and img.size > img.limit:
        diags.append(s.locs.diag(img.path, f"image does not fit its region: {img.size} bytes at IPA "
                                           f"0x{img.dst_ipa:x}, only {img.limit} bytes available"))
        return False
    return True


@dataclass(frozen=True)
class KernelHeader:
    text_offset: int
    image_size: int  # memory footprint including BSS
    file_size: int


def read_kernel_header(path: Path) -> KernelHeader | str:
    """The arm64 Image header of ``path``, or a description of what is wrong."""
    try:
        with path.open("rb") as f:
            head = f.read(64)
        file_size = path.stat().st_size
    except OSError as exc:
        return f"cannot read {path}: {exc.strerror or exc}"
    if head[:2] == b"\x1f\x8b":
        return "the kernel is gzip-compressed; give the uncompressed arm64 Image"
    if len(head) < 64 or head[56:60] != ARM64_MAGIC:
        return "not an arm64 Image (no 'ARM\\x64' magic at offset 56)"
    text_offset, image_size = struct.unpack_from("<QQ", head, 8)
    if image_size == 0:  # pre-3.17 kernels: text_offset fixed, size unknown
        return KernelHeader(0x80000, file_size, file_size)
    return KernelHeader(text_offset, max(image_size, file_size), file_size)


def _place_linux(
    s: SystemSpec, vm: VmSpec, first: MemRegion, diags: list[Diagnostic]
) -> tuple[LinuxBoot, list[VmImage]]:
    assert vm.kernel is not None  # validated
    base, size = first.ipa, first.size
    dtb_ipa = base + size - BLOCK
    kpath = join(vm.path, "kernel")
    fallback = LinuxBoot(base, dtb_ipa, None, vm.bootargs)
    if base % BLOCK:
        diags.append(s.locs.diag(join(vm.memory[0].path, "ipa"),
                                 f"the first memory region of a Linux VM must be 2 MiB aligned (IPA 0x{base:x})"))
        return fallback, []
    if size < 2 * BLOCK:
        diags.append(s.locs.diag(join(vm.memory[0].path, "size"),
                                 "the first memory region of a Linux VM needs at least 4 MiB"))
        return fallback, []
    header = read_kernel_header(vm.kernel)
    if isinstance(header, str):
        diags.append(s.locs.diag(kpath, header))
        return fallback, []
    kernel_ipa = base + header.text_offset
    kernel_end = kernel_ipa + header.image_size
    images = [VmImage("kernel", kernel_ipa, header.file_size, dtb_ipa - kernel_ipa, vm.kernel, None, kpath)]
    if kernel_end > dtb_ipa:
        diags.append(s.locs.diag(kpath, f"image does not fit its region: the kernel needs IPA "
                                        f"{Range(kernel_ipa, header.image_size)}, the device tree is at "
                                        f"0x{dtb_ipa:x} (end of memory[0] - 2 MiB)"))
        return fallback, images
    initrd: Range | None = None
    if vm.initrd is not None:
        ipath = join(vm.path, "initrd")
        isize = vm.initrd.stat().st_size
        istart = align_down(dtb_ipa - isize, PAGE)
        initrd = Range(istart, isize)
        if istart < kernel_end:
            diags.append(s.locs.diag(ipath, f"image does not fit its region: the initrd ({isize} bytes) "
                                            f"would start at 0x{istart:x}, below the kernel's end "
                                            f"0x{kernel_end:x}"))
        images.append(VmImage("initrd", istart, isize, dtb_ipa - istart, vm.initrd, None, ipath))
    images.append(VmImage("dtb", dtb_ipa, DTB_MAX, BLOCK, None, None, vm.path))
    return LinuxBoot(kernel_ipa, dtb_ipa, initrd, vm.bootargs), images


def _place_image(
    s: SystemSpec, vm: VmSpec, first: MemRegion, diags: list[Diagnostic]
) -> tuple[LinuxBoot, list[VmImage], int]:
    """An arm64-boot-protocol image: raw (loaded at ``entry``, default the
    start of memory[0]), a Linux Image (at memory[0] + text_offset) or an ELF
    file; the DTB takes the last DTB_MAX bytes of memory[0] and its IPA goes
    in x0. Returns the boot layout, the images and the entry point."""
    dtb_ipa = first.ipa + first.size - DTB_MAX
    load = vm.entry if vm.entry is not None else first.ipa
    ipath = join(vm.path, "image" if vm.image is not None else "guest")
    size: int | None = None
    if vm.image is not None:
        size = vm.image.stat().st_size
        if elf.is_elf(vm.image):
            return _place_elf(s, vm, first, dtb_ipa, diags)
        header = read_kernel_header(vm.image)
        if isinstance(header, KernelHeader):
            if first.ipa % BLOCK:
                diags.append(s.locs.diag(join(vm.memory[0].path, "ipa"), "a Linux Image needs memory[0] 2 MiB "
                                                                          f"aligned (IPA 0x{first.ipa:x})"))
            load = first.ipa + header.text_offset
            if vm.entry is not None and vm.entry != load:
                diags.append(s.locs.diag(join(vm.path, "entry"), f"a Linux Image is entered at its load address "
                                                                  f"0x{load:x} (memory[0] + text_offset)"))
            size = header.image_size
    fallback = LinuxBoot(load, dtb_ipa, None, vm.bootargs)
    if not first.ipa <= load < dtb_ipa:
        diags.append(s.locs.diag(join(vm.path, "entry"), f"entry 0x{load:x} is not in memory[0] below the device "
                                                          f"tree at 0x{dtb_ipa:x}"))
        return fallback, [], load
    img = VmImage("image", load, size, dtb_ipa - load, vm.image, vm.guest, ipath)
    if size is not None:
        _check_fits(s, img, diags)
        img = dataclasses.replace(img, size=vm.image.stat().st_size if vm.image is not None else size)
    return fallback, [img, VmImage("dtb", dtb_ipa, DTB_MAX, DTB_MAX, None, None, vm.path)], load


def _place_elf(
    s: SystemSpec, vm: VmSpec, first: MemRegion, dtb_ipa: int, diags: list[Diagnostic]
) -> tuple[LinuxBoot, list[VmImage], int]:
    """An ELF image: its PT_LOAD segments flattened (built as <out>/<vm>.image)
    at their physical addresses; the entry is e_entry unless ``entry`` is given."""
    assert vm.image is not None
    ipath = join(vm.path, "image")
    e = elf.read_elf(vm.image)
    if isinstance(e, str):
        diags.append(s.locs.diag(ipath, e))
        return LinuxBoot(first.ipa, dtb_ipa, None, vm.bootargs), [], first.ipa
    entry = vm.entry if vm.entry is not None else e.entry
    boot = LinuxBoot(e.load, dtb_ipa, None, vm.bootargs)
    if not first.ipa <= e.load or e.load + e.mem_size > dtb_ipa:
        diags.append(s.locs.diag(ipath, f"image does not fit its region: the ELF segments need IPA "
                                        f"{Range(e.load, e.mem_size)}, memory[0] below the device tree is "
                                        f"{Range(first.ipa, dtb_ipa - first.ipa)}"))
        return boot, [], entry
    if not e.load <= entry < e.load + e.mem_size:
        diags.append(s.locs.diag(ipath, f"the ELF entry 0x{entry:x} is outside its segments "
                                        f"{Range(e.load, e.mem_size)}"))
    img = VmImage("image", e.load, len(e.flat), dtb_ipa - e.load, None, None, ipath)
    return boot, [img, VmImage("dtb", dtb_ipa, DTB_MAX, DTB_MAX, None, None, vm.path)], entry


def pt_pages(ranges: Iterable[Range]) -> int:
    """Upper bound of stage-2 table pages (4 KiB granule, start at level 1).

    One L1 page, one L2 page per 1 GiB slot and one L3 page per 2 MiB slot
    that any range touches (even where a block mapping would do).
    """
    l2: set[int] = set()
    l3: set[int] = set()
    for r in ranges:
        if r.size <= 0:
            continue
        l2.update(range(r.base >> 30, ((r.end - 1) >> 30) + 1))
        l3.update(range(r.base >> 21, ((r.end - 1) >> 21) + 1))
    return 1 + len(l2) + len(l3)


def dma_view_pages(ram: Iterable[Range], devices: Iterable[Range]) -> int:
    """Upper bound of the table pages of a VM's DMA view (core/mem/mem.c, the
    SMMU's stage 2 without the VM's device mappings): its root, and a copy
    of each table that maps both RAM and a device (the others are shared
    with the VM's own tables or left out), one per 1 GiB (level 2) and
    2 MiB (level 3) slot that both touch, and two for the identity stage 1."""
    def slots(ranges: Iterable[Range], shift: int) -> set[int]:
        return {i for r in ranges if r.size > 0 for i in range(r.base >> shift, ((r.end - 1) >> shift) + 1)}
    ram, devices = list(ram), list(devices)
    # + the level-2 and level-3 tables that map the identity stage 1's two
    # pages at the top of the IPA space (SMMUv3 with stage 1, drivers/iommu.h)
    return 1 + 2 + sum(len(slots(ram, shift) & slots(devices, shift)) for shift in (30, 21))


def image_files(system: System, out: Path, guest_bins: Path) -> dict[tuple[int, str], Path]:
    """The file each image of each VM is loaded from."""
    files: dict[tuple[int, str], Path] = {}
    for vm in system.vms:
        for img in vm.images:
            if img.source is not None:
                f = img.source
            elif img.guest is not None:
                f = guest_bins / f"{img.guest}.bin"
            else:
                f = out / f"{vm.name}.{img.name}"
            files[(vm.index, img.name)] = f
    return files


def placed_pa(vm: Vm, s: StagedImage) -> int | None:
    """Where a boot loader can put image ``s`` for its VM to run it in place:
    its physical address when it lies inside one uncolored (physically
    contiguous) memory region of its VM, else None (colored memory: the
    hypervisor copies it into the VM's frames). docs/boot.md, "Placed images"."""
    for m in vm.memory:
        if m.colors is None and m.ipa <= s.dst_ipa and s.dst_ipa + s.size <= m.ipa + m.size:
            return m.pa + (s.dst_ipa - m.ipa)
    return None


def stage(system: System, out: Path, guest_bins: Path) -> tuple[StagedImage, ...]:
    """Sizes every image and packs them into the staging window.

    Order: VM by VM in config order, each VM's images in boot order; every
    image starts 4 KiB aligned. Guest binaries must exist in ``guest_bins``.
    """
    s = system.spec
    files = image_files(system, out, guest_bins)
    diags: list[Diagnostic] = []
    staged: list[StagedImage] = []
    cursor = system.platform.staging.base
    for vm in system.vms:
        for img in vm.images:
            f = files[(vm.index, img.name)]
            size = img.size
            if size is None:
                try:
                    size = f.stat().st_size
                except OSError:
                    raise BuildError(f"guest '{img.guest}' was not built: {f} does not exist") from None
                if not _check_fits(s, VmImage(img.name, img.dst_ipa, size, img.limit, f, img.guest, img.path), diags):
                    continue
            if cursor + size > system.platform.staging.end:
                diags.append(s.locs.diag(img.path, f"images do not fit the staging area "
                                                   f"({system.platform.staging}): {img.name} of VM "
                                                   f"'{vm.name}' ({size} bytes) would end at "
                                                   f"0x{cursor + size:x}"))
                break
            staged.append(StagedImage(vm.name, vm.index, img.name, f, size, cursor, img.dst_ipa))
            cursor = align_up(cursor + size, PAGE)
    if diags:
        raise ConfigError(diags)
    return tuple(staged)
