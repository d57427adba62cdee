# SPDX-License-Identifier: Apache-2.0
"""Schema checking: YAML trees -> typed specs (:mod:`bulkhead.config.model`).

Only shapes and value syntax are checked here (unknown keys, types, name
syntax, sizes); cross-field rules live in :mod:`bulkhead.config.validate`. Every
error names the file position and key path of the offending value.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar, cast

from bulkhead import drivers
from bulkhead.config import mechanisms
from bulkhead.config.mechanism import AddToVm
from bulkhead.config.model import (
    GIC_FRAME,
    GIC_VERSIONS,
    PA_BITS,
    UART_DRIVERS,
    CacheModelSpec,
    ConsoleSpec,
    FaultPolicy,
    FirmwareSpec,
    GicSpec,
    Locs,
    MemSpec,
    MethodSpec,
    Platform,
    PlatformDevice,
    QemuSpec,
    Range,
    ShmemMapSpec,
    ShmemSpec,
    SystemSpec,
    TimerSpec,
    TimingSpec,
    UartSpec,
    VmSpec,
    VmType,
)
from bulkhead.config.reader import Reader, join
from bulkhead.config.yamlpos import YList, YMap, YNode, YScalar, describe
from bulkhead.drivers import gic as gic_drivers
from bulkhead.drivers import uart as uart_drivers

PLATFORM_NAME_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}\Z")
PARAM_KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}\Z")

# the keys of each file's parts: the schema's own, then each registered
# mechanism's (bulkhead.config.mechanisms; its parse_* hooks read them)
CORE_VM_KEYS = ("name", "type", "cpus", "memory", "kernel", "initrd", "bootargs", "guest", "image", "entry", "params",
                "console", "devices", "on_fault", "manager", "introspection", "mixed_core_types")
CORE_SYSTEM_KEYS = ("platform", "console_input", "vms", "shmem")
CORE_PLATFORM_KEYS = ("name", "board", "qemu", "cpus", "ram", "hypervisor", "staging", "mmio", "gic", "timer",
                      "uart", "console", "devices", "model", "reserved", "cpu_enable", "power_off")
REQUIRED_PLATFORM_KEYS = ("name", "cpus", "ram", "hypervisor", "staging", "mmio", "gic", "timer", "uart", "console")


def keys(part: Literal["platform", "system", "vm"]) -> tuple[str, ...]:
    """Every key ``part`` may have: the schema's, then the mechanisms'."""
    core = {"platform": CORE_PLATFORM_KEYS, "system": CORE_SYSTEM_KEYS, "vm": CORE_VM_KEYS}[part]
    own = (m.platform_keys if part == "platform" else m.system_keys if part == "system" else m.vm_keys
           for m in mechanisms.registered())
    return tuple(dict.fromkeys([*core, *(k for ks in own for k in ks)]))


CORE_TYPE_RE = re.compile(r"[a-z][a-z0-9_-]{0,31}\Z")


def parse_platform(node: YNode, file: Path, display: str, data: bytes) -> Platform:
    locs = Locs(display)
    r = Reader(locs)
    top = r.mapping(node, "", keys("platform"), REQUIRED_PLATFORM_KEYS)

    qemu = _parse_qemu(r, top["qemu"]) if "qemu" in top else None

    def cpu(n: YNode, path: str) -> tuple[int, str]:
        what = "an MPIDR value (integer)"
        if isinstance(n, YMap):
            m = r.mapping(n, path, ("mpidr", "type"), ("mpidr", "type"), "a CPU {mpidr, type} or an MPIDR")
            return (r.integer(m["mpidr"], join(path, "mpidr"), what, 0, (1 << 40) - 1),
                    r.name(m["type"], join(path, "type"), "a core type (e.g. cortex-a55)", CORE_TYPE_RE))
        return r.integer(n, path, f"{what} or a CPU {{mpidr, type}}", 0, (1 << 40) - 1), ""

    cpus = r.each(top["cpus"], "cpus", cpu)
    mpidr = tuple(m for m, _ in cpus)
    typed = [t for _, t in cpus if t]
    if typed and len(typed) != len(cpus):
        i = next(i for i, (_, t) in enumerate(cpus) if not t)
        raise r.fail(top["cpus"], f"cpus[{i}]", "give every CPU a type ({mpidr, type}) or none")

    gic = _parse_gic(r, top["gic"])
    timer_keys = ("hyp_irq", "virt_irq", "phys_irq", "secure_irq")
    t = r.mapping(top["timer"], "timer", timer_keys, timer_keys)
    timer = TimerSpec(*(r.irq(t[k], f"timer.{k}") for k in timer_keys))
    uart = _parse_uart(r, top["uart"])
    c = r.mapping(top["console"], "console", ("ipa", "irq"), ("ipa", "irq"))
    console = ConsoleSpec(r.address(c["ipa"], "console.ipa"), r.irq(c["irq"], "console.irq"))

    def device(n: YNode, path: str) -> PlatformDevice:
        d = r.mapping(n, path, ("name", "base", "size", "irqs", "compatible", "amba", "dma", "stream_ids", "smmu"),
                      ("name", "base", "size", "compatible"))
        compat_node = d["compatible"]
        if isinstance(compat_node, YList):
            compatible = r.each(compat_node, join(path, "compatible"), lambda n2, p2: r.text(n2, p2))
        else:
            compatible = (r.text(compat_node, join(path, "compatible"), "a string or a list of strings"),)
        if not compatible:
            raise r.fail(compat_node, join(path, "compatible"), "needs at least one compatible string")
        irqs = r.each(d["irqs"], join(path, "irqs"), r.irq) if "irqs" in d else ()
        return PlatformDevice(
            name=r.name(d["name"], join(path, "name"), "a device name"),
            base=r.address(d["base"], join(path, "base")),
            size=r.size(d["size"], join(path, "size")),
            irqs=irqs,
            compatible=compatible,
            amba=r.boolean(d["amba"], join(path, "amba")) if "amba" in d else False,
            path=path,
            dma=r.boolean(d["dma"], join(path, "dma")) if "dma" in d else False,
            stream_ids=r.each(d["stream_ids"], join(path, "stream_ids"),
                              lambda n2, p2: r.integer(n2, p2, "a stream ID (integer 0-0xffffffff)", 0, 0xFFFFFFFF),
                              "a list of stream IDs") if "stream_ids" in d else (),
            smmu=r.name(d["smmu"], join(path, "smmu"), "an SMMU name") if "smmu" in d else None,
        )

    devices = r.each(top["devices"], "devices", device) if "devices" in top else ()
    name = r.name(top["name"], "name", "a platform name", PLATFORM_NAME_RE)
    banks = (r.each(top["ram"], "ram", r.range, "a RAM range {base, size} or a list of them (DRAM banks)")
             if isinstance(top["ram"], YList) else (r.range(top["ram"], "ram"),))
    if not banks:
        raise r.fail(top["ram"], "ram", "expected at least one RAM bank {base, size}")
    mmio = r.range(top["mmio"], "mmio")
    firmware = _parse_firmware(r, top, len(mpidr), banks, mmio)
    platform = Platform(
        name=name,
        board=r.name(top["board"], "board", "a board name", PLATFORM_NAME_RE) if "board" in top else name,
        file=file,
        display=display,
        data=data,
        qemu=qemu,
        mpidr=mpidr,
        ram=banks[0],
        ram_banks=banks,
        hypervisor=r.range(top["hypervisor"], "hypervisor"),
        staging=r.range(top["staging"], "staging"),
        mmio=mmio,
        gic=gic,
        timer=timer,
        uart=uart,
        console=console,
        devices=devices,
        locs=locs,
        cachemodel=_parse_cachemodel(r, top["model"]) if "model" in top else None,
        reserved=r.each(top["reserved"], "reserved", r.range, "a list of reserved RAM ranges {base, size}")
        if "reserved" in top else (),
        cpu_types=tuple(t for _, t in cpus) if typed else (),
        firmware=firmware,
    )
    for m in mechanisms.registered():
        platform = m.parse_platform(r, top, platform) if m.parse_platform is not None else platform
    return platform


def _parse_firmware(r: Reader, top: dict[str, YNode], ncpus: int, banks: tuple[Range, ...],
                    mmio: Range) -> FirmwareSpec:
    """``cpu_enable: {method, ...}`` and ``power_off: {method, ...}`` (default:
    PSCI over SMC for both; docs/config.md "Platform file"): each method is a
    driver, whose descriptor names its other keys and checks their values."""
    board = drivers.Board(ncpus, tuple((b.base, b.end) for b in banks), (mmio.base, mmio.end))
    return FirmwareSpec(*(_parse_method(r, top, kind, board) for kind in ("cpu_enable", "power_off")))


def _parse_method(r: Reader, top: dict[str, YNode], kind: str, board: drivers.Board) -> MethodSpec:
    """``<kind>: {method, <the method's keys>}``: the driver the method names
    (bulkhead/drivers/<kind>/), each of its keys there and no other's."""
    if kind not in top:
        return MethodSpec()
    known = drivers.methods(kind)
    params = {p.key: p for d in known for p in d.params}
    m = r.mapping(top[kind], kind, ("method", *params), ("method",))
    default = MethodSpec().method
    value = r.choice(m["method"], f"{kind}.method", sorted(drivers.values(kind), key=lambda v: (v != default, v)))
    driver = next(d for d in known if value in d.compatible)
    for key, param in params.items():
        if (key in m) != any(p.key == key for p in driver.params):
            owners = " or ".join(d.compatible[0] for d in known if any(p.key == key for p in d.params))
            raise r.fail(top[kind], kind, f"'{key}' ({param.what}) goes with method {owners}, and only there")
    args: list[tuple[str, drivers.Value]] = []
    for p in driver.params:
        path = f"{kind}.{p.key}"
        v: drivers.Value = r.each(m[p.key], path, r.address, p.list_of) if p.list_of else r.address(m[p.key], path)
        if (mistake := driver.check(p.key, v, board)) is not None:
            raise r.fail(m[p.key], path + mistake[0], mistake[1])
        args.append((p.key, v))
    return MethodSpec(value, driver.name, tuple(args))


def _parse_qemu(r: Reader, node: YNode) -> QemuSpec:
    """``qemu:``: the QEMU model of the board (optional: without it the board
    builds but ``bulkhead run`` refuses it)."""
    q = r.mapping(node, "qemu", ("binary", "machine", "cpu", "memory", "args", "serial", "kernel", "dtb"),
                  ("binary", "machine", "cpu", "memory"))
    return QemuSpec(
        binary=r.text(q["binary"], "qemu.binary"),
        machine=r.text(q["machine"], "qemu.machine"),
        cpu=r.name(q["cpu"], "qemu.cpu", "a CPU model name", PLATFORM_NAME_RE),
        memory=r.size(q["memory"], "qemu.memory"),
        args=r.each(q["args"], "qemu.args", lambda n, p: r.text(n, p)) if "args" in q else (),
        serial=r.integer(q["serial"], "qemu.serial", "a serial port index 0-3", 0, 3) if "serial" in q else 0,
        kernel=r.choice(q["kernel"], "qemu.kernel", ("elf", "image")) if "kernel" in q else "elf",
        dtb=r.text(q["dtb"], "qemu.dtb") if "dtb" in q else None,
    )


GIC_KEYS = {
    3: ("version", "driver", "gicd", "gicr", "gicr_stride", "vgicd", "vgicr", "spis", "maintenance_irq",
        "spare_spis", "spare_ppis", "its", "v4", "virq"),
    2: ("version", "driver", "gicd", "gicc", "gich", "gicv", "page_stride", "vgicd", "vgicc", "spis",
        "maintenance_irq", "spare_spis"),
}


def _parse_spare_spis(r: Reader, node: YNode) -> tuple[int, ...]:
    """``gic.spare_spis``: INTIDs and ``[first, last]`` ranges of SPIs no device drives."""
    out: list[int] = []
    for i, item in enumerate(r.seq(node, "gic.spare_spis", "a list of SPIs and [first, last] ranges")):
        q = f"gic.spare_spis[{i}]"
        if isinstance(item, YScalar):
            out.append(r.irq(item, q))
            continue
        ends = r.seq(item, q, "an SPI or a [first, last] range")
        if len(ends) != 2:
            raise r.fail(item, q, "expected an SPI or a [first, last] range")
        first, last = r.irq(ends[0], f"{q}[0]"), r.irq(ends[1], f"{q}[1]")
        if last < first:
            raise r.fail(item, q, f"range {first}-{last} is empty")
        out.extend(range(first, last + 1))
    return tuple(dict.fromkeys(out))


def _parse_uart(r: Reader, node: YNode) -> UartSpec:
    """``uart:``: the driver (bulkhead/drivers/uart/) and its register
    spacing, the descriptor's defaults unless given and one it honours."""
    u = r.mapping(node, "uart", ("base", "irq", "driver", "reg_shift", "reg_io_width"), ("base", "irq"))
    found = drivers.compatible("uart", r.choice(u["driver"], "uart.driver", UART_DRIVERS)) if "driver" in u else None
    d = uart_drivers.of_name(found.name if found is not None else "pl011")
    spacing = {"reg_shift": d.reg_shift, "reg_io_width": d.reg_io_width}
    for key, honoured in (("reg_shift", d.reg_shifts), ("reg_io_width", d.reg_io_widths)):
        if key in u:
            names = " or ".join(filter(None, (", ".join(str(v) for v in honoured[:-1]), str(honoured[-1]))))
            spacing[key] = r.integer(u[key], f"uart.{key}", f"an integer ({names})")
            if spacing[key] not in honoured:
                raise r.fail(u[key], f"uart.{key}", f"the {d.name} driver takes {names}, got {spacing[key]}")
    if 1 << spacing["reg_shift"] < spacing["reg_io_width"]:
        raise r.fail(u["reg_io_width"] if "reg_io_width" in u else node, "uart.reg_io_width",
                     f"{spacing['reg_io_width']}-byte registers every {1 << spacing['reg_shift']} bytes overlap "
                     f"(reg_shift {spacing['reg_shift']}): give reg_shift 2")
    return UartSpec(r.address(u["base"], "uart.base"), r.irq(u["irq"], "uart.irq"), d.name, **spacing)


def _parse_gic(r: Reader, node: YNode) -> GicSpec:
    """``gic:``: the keys depend on ``version`` (GicSpec)."""
    v = r.mapping(node, "gic", tuple(dict.fromkeys(GIC_KEYS[3] + GIC_KEYS[2])), ("version",))
    # the versions with a driver in hypervisor/drivers/gic/ (and a key set here)
    versions = [n for n in GIC_VERSIONS if n in GIC_KEYS]
    names = " or ".join(str(n) for n in versions)
    version = r.integer(v["version"], "gic.version", f"a GIC version ({names})", min(versions), max(versions))
    if version not in versions:
        raise r.fail(v["version"], "gic.version", f"expected a GIC version with a driver ({names}), got {version}")
    keys = GIC_KEYS[version]
    g = r.mapping(node, "gic", keys,
                  [k for k in keys if k not in ("driver", "page_stride", "spare_spis", "spare_ppis", "its", "v4", "virq")
                   and not (version == 3 and k in ("vgicd", "vgicr"))])
    driver = f"gicv{version}"
    if "driver" in g:  # a driver of this architecture (bulkhead/drivers/gic/)
        fit = tuple(v for d in gic_drivers.all_drivers() if d.arch == version for v in d.compatible)
        found = drivers.compatible("gic", r.choice(g["driver"], "gic.driver", fit))
        driver = found.name if found is not None else driver
    common: dict[str, Any] = {
        "version": version,
        "driver": driver,
        "gicd": r.address(g["gicd"], "gic.gicd"),
        "spis": r.integer(g["spis"], "gic.spis", "a number of SPIs (32-988)", 32, 988),
        "maintenance_irq": r.irq(g["maintenance_irq"], "gic.maintenance_irq"),
    }
    spare = _parse_spare_spis(r, g["spare_spis"]) if "spare_spis" in g else ()
    if version == 3:
        ppis = r.each(g["spare_ppis"], "gic.spare_ppis", lambda n, q: r.irq(n, q), "a list of PPIs") \
            if "spare_ppis" in g else ()
        gicr = r.address(g["gicr"], "gic.gicr")
        # where VMs see their GICD and GICRs (default: the physical frames' addresses)
        vgicd = r.address(g["vgicd"], "gic.vgicd") if "vgicd" in g else common["gicd"]
        vgicr = r.address(g["vgicr"], "gic.vgicr") if "vgicr" in g else gicr
        virq = r.choice(g["virq"], "gic.virq", ("wired", "software")) if "virq" in g else "wired"
        return GicSpec(**common, spare_spis=spare, spare_ppis=ppis, gicr=gicr,
                       gicr_stride=r.size(g["gicr_stride"], "gic.gicr_stride"), vgicd=vgicd, vgicr=vgicr,
                       its=r.address(g["its"], "gic.its") if "its" in g else 0, virq=virq,
                       v4=r.boolean(g["v4"], "gic.v4") if "v4" in g else False)
    return GicSpec(**common, spare_spis=spare, spare_ppis=(), gicc=r.address(g["gicc"], "gic.gicc"),
                   gich=r.address(g["gich"], "gic.gich"),
                   gicv=r.address(g["gicv"], "gic.gicv"),
                   page_stride=r.size(g["page_stride"], "gic.page_stride") if "page_stride" in g else GIC_FRAME,
                   vgicd=r.address(g["vgicd"], "gic.vgicd"), vgicc=r.address(g["vgicc"], "gic.vgicc"))


def _parse_cachemodel(r: Reader, node: YNode) -> CacheModelSpec:
    """``model:`` (docs/model.md): the QEMU plugin's cache and DRAM model. Its
    LLC geometry and bank bits are ``coloring:``'s; that it has them is
    checked when the model is used (:func:`bulkhead.run.cachemodel.check_platform`)."""
    path = "model"
    m = r.mapping(node, path, ("llc", "l1d", "dram", "timing"), (), "a mapping {llc, l1d, dram, timing}")
    replacement, seed = "lru", 1
    if "llc" in m:
        q = join(path, "llc")
        g = r.mapping(m["llc"], q, ("replacement", "seed"), ("replacement",), "a mapping {replacement, seed}")
        replacement = r.choice(g["replacement"], join(q, "replacement"), ("lru", "random"))
        if "seed" in g:
            if replacement != "random":
                raise r.fail(g["seed"], join(q, "seed"), "a seed is only used by random replacement")
            seed = r.integer(g["seed"], join(q, "seed"), "a seed (integer 1-2^63)", 1, (1 << 63) - 1)
    l1d = r.cache_geometry(m["l1d"], join(path, "l1d"), "L1D") if "l1d" in m else None
    row_shift = None
    if "dram" in m:
        q = join(path, "dram")
        g = r.mapping(m["dram"], q, ("row_shift",), ("row_shift",), "a mapping {row_shift}")
        row_shift = r.integer(g["row_shift"], join(q, "row_shift"), f"the lowest row bit (integer 13-{PA_BITS - 1})",
                              13, PA_BITS - 1)
    timing = _parse_timing(r, m["timing"], join(path, "timing")) if "timing" in m else None
    return CacheModelSpec(cast(Literal["lru", "random"], replacement), seed, l1d, row_shift, path, timing)


def _positive(r: Reader, node: YNode, path: str, what: str) -> float:
    r.visit(node, path)
    value = node.value if isinstance(node, YScalar) else None
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 < value < 1e9:
        raise r.fail(node, path, f"expected {what} (a number > 0), got {describe(node)}")
    return float(value)


def _parse_timing(r: Reader, node: YNode, path: str) -> TimingSpec:
    """``model.timing:`` (docs/model.md "Timing model")."""
    keys = ("cpi", "cpu_mhz", "llc_hit_ns", "dram_ns", "dram_mbps", "window_ns", "l1d")
    m = r.mapping(node, path, keys, keys[:6], "a mapping {cpi, cpu_mhz, llc_hit_ns, dram_ns, dram_mbps, window_ns, l1d}")
    q = join(path, "dram_ns")
    rows = r.mapping(m["dram_ns"], q, ("row_hit", "row_empty", "row_conflict"), ("row_hit", "row_empty", "row_conflict"),
                     "a mapping {row_hit, row_empty, row_conflict}")
    hit, empty, conflict = (_positive(r, rows[k], join(q, k), f"the {k.replace('_', ' ')} latency in ns")
                            for k in ("row_hit", "row_empty", "row_conflict"))
    cpi = _positive(r, m["cpi"], join(path, "cpi"), "cycles per instruction")
    mhz = _positive(r, m["cpu_mhz"], join(path, "cpu_mhz"), "the core clock in MHz")
    llc = _positive(r, m["llc_hit_ns"], join(path, "llc_hit_ns"), "the LLC hit latency in ns")
    mbps = _positive(r, m["dram_mbps"], join(path, "dram_mbps"), "the sustainable DRAM bandwidth in MB/s")
    window = _positive(r, m["window_ns"], join(path, "window_ns"), "the queueing window in ns")
    if window * mbps * 1e6 / 1e9 < 64:
        raise r.fail(m["window_ns"], join(path, "window_ns"), "the window must hold at least one 64 B line at dram_mbps")
    l1d = r.cache_geometry(m["l1d"], join(path, "l1d"), "L1D") if "l1d" in m else None
    return TimingSpec(cpi, mhz, llc, hit, empty, conflict, mbps, window, l1d)


# --- system config -------------------------------------------------------

PlatformLoader = Callable[[str], Platform]


def parse_system(
    node: YNode, file: Path, display: str, data: bytes, load_platform: PlatformLoader
) -> SystemSpec:
    """Parse a system config; ``load_platform(name)`` returns the platform."""
    locs = Locs(display)
    r = Reader(locs)
    top = r.mapping(node, "", keys("system"), ("platform", "vms"))
    platform_name = r.name(top["platform"], "platform", "a platform name", PLATFORM_NAME_RE)
    try:
        platform = load_platform(platform_name)
    except _UnknownPlatform as exc:
        raise r.fail(top["platform"], "platform", str(exc)) from None
    base = file.parent

    console_input: str | None = None
    if "console_input" in top:
        ci = top["console_input"]
        if not (isinstance(ci, YScalar) and ci.value is None):
            console_input = r.string(ci, "console_input", "a VM name (or none)")

    vm_nodes = r.seq(top["vms"], "vms", "a list of VMs")
    if not vm_nodes:
        raise r.fail(top["vms"], "vms", "at least one VM is required")
    vms = tuple(_parse_vm(r, n, f"vms[{i}]", i, base, platform) for i, n in enumerate(vm_nodes))
    shmem = r.each(top["shmem"], "shmem", lambda n, p: _parse_shmem(r, n, p)) if "shmem" in top else ()
    shmem = tuple(
        ShmemSpec(i, s.name, s.size, s.pa, s.maps, s.path, s.colors) for i, s in enumerate(shmem)
    )
    spec = SystemSpec(file, display, data, platform, console_input, vms, shmem, locs)
    for m in mechanisms.registered():
        spec = m.parse_system(r, top, spec) if m.parse_system is not None else spec
    return spec


class _UnknownPlatform(Exception):
    pass


def unknown_platform(name: str, available: Sequence[str]) -> Exception:
    """The exception a platform loader raises for a name it does not know."""
    listed = ", ".join(available) if available else "none"
    return _UnknownPlatform(f"unknown platform '{name}'; available: {listed}")


def _parse_vm(r: Reader, node: YNode, path: str, index: int, base: Path, platform: Platform) -> VmSpec:
    m = r.mapping(node, path, keys("vm"), ("name", "cpus", "memory"), "a VM (mapping)")

    def p(key: str) -> str:
        return join(path, key)

    name = r.name(m["name"], p("name"), "a VM name")
    if name == "none":
        raise r.fail(m["name"], p("name"), "the VM name 'none' is reserved")
    vm_type: VmType = "baremetal"
    if "type" in m:
        chosen = r.choice(m["type"], p("type"), ("linux", "baremetal", "image"))
        vm_type = "linux" if chosen == "linux" else "image" if chosen == "image" else "baremetal"
    cpus = r.each(m["cpus"], p("cpus"), lambda n, q: r.integer(n, q, "a CPU index (integer)", 0), "a list of CPU indices")

    def mem(n: YNode, q: str) -> MemSpec:
        mm = r.mapping(n, q, ("ipa", "size", "pa", *_region_keys()), ("ipa", "size"), "a memory region (mapping)")
        return _region(r, mm, MemSpec(
            ipa=r.address(mm["ipa"], join(q, "ipa")),
            size=r.size(mm["size"], join(q, "size")),
            pa=r.address(mm["pa"], join(q, "pa")) if "pa" in mm else None,
            path=q,
        ))

    memory = r.each(m["memory"], p("memory"), mem, "a list of memory regions")

    def opt_file(key: str) -> Path | None:
        return r.file(m[key], p(key), base) if key in m else None

    params: list[tuple[str, str]] = []
    if "params" in m:
        pm = m["params"]
        r.visit(pm, p("params"))
        if not isinstance(pm, YMap):
            raise r.fail(pm, p("params"), f"expected a mapping of parameters, got {describe(pm)}")
        for key, value in pm.items:
            kpath = join(p("params"), key.raw)
            r.visit(value, kpath)
            if not PARAM_KEY_RE.match(key.raw):
                raise r.fail(key, kpath, f"invalid parameter name '{key.raw}'")
            if key.raw == "vm":
                raise r.fail(key, kpath, "the parameter 'vm' is reserved (always set to the VM name)")
            params.append((key.raw, _param_value(r, value, kpath)))

    console: ConsoleSpec | None = platform.console
    if "console" in m:
        cn = m["console"]
        if isinstance(cn, YScalar) and cn.value == "none":
            console = None
        else:
            cm = r.mapping(cn, p("console"), ("ipa", "irq"), (), "a mapping {ipa, irq} or none")
            console = ConsoleSpec(
                ipa=r.address(cm["ipa"], p("console.ipa")) if "ipa" in cm else platform.console.ipa,
                irq=r.irq(cm["irq"], p("console.irq")) if "irq" in cm else platform.console.irq,
            )

    dev_entries = r.each(m["devices"], p("devices"), lambda n, q: _device(r, n, q),
                         "a list of devices") if "devices" in m else ()
    on_fault: FaultPolicy = "inject"
    if "on_fault" in m:
        on_fault = "stop" if r.choice(m["on_fault"], p("on_fault"), ("inject", "stop")) == "stop" else "inject"

    vm = VmSpec(
        index=index,
        name=name,
        type=vm_type,
        cpus=cpus,
        memory=memory,
        kernel=opt_file("kernel"),
        initrd=opt_file("initrd"),
        bootargs=r.text(m["bootargs"], p("bootargs")) if "bootargs" in m else None,
        guest=r.name(m["guest"], p("guest"), "a guest name") if "guest" in m else None,
        image=opt_file("image"),
        entry=r.address(m["entry"], p("entry")) if "entry" in m else None,
        params=tuple(params),
        console=console,
        devices=tuple(name for name, _ in dev_entries),
        on_fault=on_fault,
        path=path,
        manager=r.boolean(m["manager"], p("manager")) if "manager" in m else False,
        introspection=r.boolean(m["introspection"], p("introspection")) if "introspection" in m else False,
        mixed_core_types=r.boolean(m["mixed_core_types"], p("mixed_core_types"))
        if "mixed_core_types" in m else False,
    )
    for _, adds in dev_entries:  # what the mechanisms read of each device entry
        for add in adds:
            vm = add(vm)
    for mech in mechanisms.registered():
        vm = mech.parse_vm(r, m, vm, platform) if mech.parse_vm is not None else vm
    return vm


def _device(r: Reader, node: YNode, path: str) -> tuple[str, list[AddToVm]]:
    """A VM's ``devices[j]``: a name, or ``{name, <the mechanisms' device
    keys>}`` (QoS-400's ``qos``, DMA isolation's ``on_dma_fault``)."""
    keys = tuple(k for mech in mechanisms.registered() for k in mech.device_keys)
    what = "a mapping {" + ", ".join(("name", *keys)) + "}"
    if isinstance(node, YScalar):
        return r.string(node, path, f"a device name or {what}"), []
    if not isinstance(node, YMap):
        raise r.fail(node, path, f"expected a device name or {what}, got {describe(node)}")
    for mech in mechanisms.registered():
        if mech.check_device is not None:
            mech.check_device(r, node, path)
    m = r.mapping(node, path, ("name", *keys), ("name",), what)
    name = r.string(m["name"], join(path, "name"), "a device name")
    return name, [mech.parse_device(r, m, name, path) for mech in mechanisms.registered()
                  if mech.parse_device is not None]


def _param_value(r: Reader, node: YNode, path: str) -> str:
    what = "a parameter value (string, integer or boolean)"
    if isinstance(node, YScalar):
        r.plain_boolean(node, path)
        if isinstance(node.value, bool):
            return "true" if node.value else "false"
        if isinstance(node.value, int):
            return str(node.value)
        if isinstance(node.value, str):
            return r.text(node, path, what)
    raise r.fail(node, path, f"expected {what}, got {describe(node)}")


def _parse_shmem(r: Reader, node: YNode, path: str) -> ShmemSpec:
    m = r.mapping(node, path, ("name", "size", "pa", "vms", *_region_keys()), ("name", "size", "vms"),
                  "a shared-memory region (mapping)")

    def mapping(n: YNode, q: str) -> ShmemMapSpec:
        mm = r.mapping(n, q, ("vm", "ipa", "doorbell_irq"), ("vm", "ipa"), "a mapping {vm, ipa, doorbell_irq}")
        return ShmemMapSpec(
            vm=r.string(mm["vm"], join(q, "vm"), "a VM name"),
            ipa=r.address(mm["ipa"], join(q, "ipa")),
            doorbell_irq=r.irq(mm["doorbell_irq"], join(q, "doorbell_irq")) if "doorbell_irq" in mm else None,
            path=q,
        )

    maps = r.each(m["vms"], join(path, "vms"), mapping, "a list of {vm, ipa} mappings")
    if not maps:
        raise r.fail(m["vms"], join(path, "vms"), "at least one VM is required")
    return _region(r, m, ShmemSpec(
        index=0,
        name=r.name(m["name"], join(path, "name"), "a shared-memory name"),
        size=r.size(m["size"], join(path, "size")),
        pa=r.address(m["pa"], join(path, "pa")) if "pa" in m else None,
        maps=maps,
        path=path,
    ))


def _region_keys() -> tuple[str, ...]:
    """The keys mechanisms own in a memory region and a shared region (``colors``)."""
    return tuple(k for m in mechanisms.registered() for k in m.region_keys)


RegionT = TypeVar("RegionT", MemSpec, ShmemSpec)


def _region(r: Reader, m: dict[str, YNode], region: RegionT) -> RegionT:
    """``region`` with what each mechanism reads of its keys ``m``."""
    for mech in mechanisms.registered():
        if mech.parse_region is not None:
            out = mech.parse_region(r, m, region)
            assert isinstance(out, type(region)), mech.name
            region = out
    return region
