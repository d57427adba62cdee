# SPDX-License-Identifier: Apache-2.0
"""Device-side interference: CoreLink QoS-400 regulation and DMA isolation
(docs/qos.md).

- Platform file: ``qos_regulators: [{name, base, clock_hz, transaction_bytes,
  devices, access}]`` -- one per AXI slave interface of the interconnect
  (NIC-400 GPV register block) -- and ``dma: true`` on the devices that are
  bus masters.
- VM: a passthrough device written as ``{name: zdma0, qos: {read: ...,
  write: ...}}``, each direction ``{raw | tps | mbps, burst, peak}``.
- System: ``dma_isolation: none`` (checked in :mod:`bulkhead.config.dma`) accepts DMA-capable passthrough devices on a
  platform without SMMU support.

The arithmetic (Arm CoreLink QoS-400 TRM, "transaction rate regulation"):
the regulator admits on average ``r`` transactions per clock cycle where
``r`` is the 12-bit field ``ar_r``/``aw_r`` [31:20] read as a fraction of
2^12 (0x001 = 1/4096 ... 0xFFF = 4095/4096); the token bucket holds up to
``b`` transactions (``ar_b``/``aw_b`` [15:0]); the peak rate ``p`` is the
8-bit field ``ar_p``/``aw_p`` [31:24] read as a fraction of 2^8. A rate in
transactions/s becomes ``floor(tps x 4096 / clock_hz)`` (never more than
asked for), one in MB/s first becomes ``MB/s x 10^6 / transaction_bytes``
transactions/s. ``hypervisor/isolation/qos400.c`` writes the values this
module computes.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from bulkhead.base.csource import CSource, Field, cstr, hexa, struct_rows
from bulkhead.base.errors import Diagnostic
from bulkhead.config.mechanism import AddToVm, Keys, Mechanism, Need, SystemView
from bulkhead.config.model import (
    DeviceQosSpec,
    Platform,
    QosAccess,
    QosDirectionSpec,
    QosRegulatorSpec,
    Range,
    Resolved,
    SystemSpec,
)
from bulkhead.config.reader import Reader
from bulkhead.config.yamlpos import YNode

# register offsets from the block's base (read_qos) [QoS-400 TRM; the ZynqMP
# blocks at FPD_GPV/LPD_GPV + 0x..100, UG1087 FPD_GPV/LPD_GPV modules]
REGISTERS = {"qos_cntl": 0x0C, "max_ot": 0x10, "max_comb_ot": 0x14, "aw_p": 0x18, "aw_b": 0x1C,
             "aw_r": 0x20, "ar_p": 0x24, "ar_b": 0x28, "ar_r": 0x2C}
BLOCK_SIZE = 0x30  # read_qos .. ar_r
R_SHIFT, R_BITS = 20, 12  # ar_r/aw_r [31:20]
B_SHIFT, B_BITS = 0, 16  # ar_b/aw_b [15:0]
P_SHIFT, P_BITS = 24, 8  # ar_p/aw_p [31:24]
R_MAX = (1 << R_BITS) - 1
B_MAX = (1 << B_BITS) - 1
P_MAX = (1 << P_BITS) - 1
EN_AW_RATE = 1 << 0  # qos_cntl
EN_AR_RATE = 1 << 1
DEFAULT_BURST = 1  # a direction without 'burst': no credit beyond one transaction
DEFAULT_PEAK = P_MAX  # without 'peak': only the average rate limits
MAX_CLOCK_HZ = 10**10
MAX_PROGRAMMED = 8  # QOS400_MAX in hypervisor/isolation/qos400.h (config.c asserts it)

PLATFORM_KEYS = ("name", "base", "clock_hz", "transaction_bytes", "devices", "access")
DIRECTION_KEYS = ("raw", "tps", "mbps", "burst", "peak")
ACCESS: tuple[QosAccess, ...] = ("mmio", "smc")


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


class QosRangeError(ValueError):
    """A setting the regulator cannot express (the message says why)."""


# --- arithmetic -----------------------------------------------------------------


def tps_of(raw: int, clock_hz: int) -> float:
    """Transactions per second a rate field ``raw`` admits at ``clock_hz``."""
    return raw * clock_hz / (1 << R_BITS)


def mbps_of(raw: int, clock_hz: int, transaction_bytes: int) -> float:
    """MB/s (10^6 B/s) a rate field admits with ``transaction_bytes`` per transaction."""
    return tps_of(raw, clock_hz) * transaction_bytes / 1e6


def peak_tps_of(raw: int, clock_hz: int) -> float:
    """Transactions per second a peak field ``raw`` (fraction of 2^8) stands for."""
    return raw * clock_hz / (1 << P_BITS)


def _fmt_tps(tps: float) -> str:
    return f"{tps / 1e6:.4g} M" if tps >= 1e6 else f"{tps / 1e3:.4g} k" if tps >= 1e3 else f"{tps:.3g} "


def check_raw_rate(raw: int) -> int:
    if not 1 <= raw <= R_MAX:
        raise QosRangeError(f"rate 0x{raw:x} does not fit the 12-bit rate field (0x1-0x{R_MAX:x})")
    return raw


def rate_from_tps(tps: int, clock_hz: int) -> int:
    """The rate field for at most ``tps`` transactions/s (rounded down)."""
    raw = tps * (1 << R_BITS) // clock_hz
    if raw < 1:
        raise QosRangeError(f"{tps} transactions/s is below the lowest rate the regulator can express: "
                            f"1/4096 transaction per cycle = {tps_of(1, clock_hz):.0f} transactions/s "
                            f"at {clock_hz / 1e6:g} MHz")
    if raw > R_MAX:
        raise QosRangeError(f"{tps} transactions/s is above the highest rate the regulator can express: "
                            f"4095/4096 transaction per cycle = {tps_of(R_MAX, clock_hz):.0f} transactions/s "
                            f"at {clock_hz / 1e6:g} MHz")
    return raw


def rate_from_mbps(mbps: int, clock_hz: int, transaction_bytes: int) -> int:
    """The rate field for at most ``mbps`` MB/s of ``transaction_bytes`` transactions."""
    raw = mbps * 1_000_000 * (1 << R_BITS) // (transaction_bytes * clock_hz)
    if not 1 <= raw <= R_MAX:
        lo, hi = mbps_of(1, clock_hz, transaction_bytes), mbps_of(R_MAX, clock_hz, transaction_bytes)
        raise QosRangeError(f"{mbps} MB/s is outside what the regulator can express with "
                            f"{transaction_bytes}-byte transactions at {clock_hz / 1e6:g} MHz: "
                            f"{lo:.3g}-{hi:.0f} MB/s")
    return raw


def encode_rate(raw: int) -> int:
    return check_raw_rate(raw) << R_SHIFT


def decode_rate(reg: int) -> int:
    return (reg >> R_SHIFT) & R_MAX


def encode_burst(burst: int) -> int:
    if not 1 <= burst <= B_MAX:
        raise QosRangeError(f"burst {burst} does not fit the 16-bit burstiness field (1-{B_MAX} transactions)")
    return burst << B_SHIFT


def encode_peak(peak: int) -> int:
    if not 1 <= peak <= P_MAX:
        raise QosRangeError(f"peak 0x{peak:x} does not fit the 8-bit peak-rate field (0x1-0x{P_MAX:x})")
    return peak << P_SHIFT


def decode_peak(reg: int) -> int:
    return (reg >> P_SHIFT) & P_MAX


@dataclass(frozen=True)
class Direction:
    """One direction of a regulator as programmed."""

    rate: int  # the r field
    burst: int  # the b field
    peak: int  # the p field

    def registers(self, prefix: str) -> dict[str, int]:
        return {f"{prefix}_r": encode_rate(self.rate), f"{prefix}_b": encode_burst(self.burst),
                f"{prefix}_p": encode_peak(self.peak)}


def resolve(d: QosDirectionSpec, reg: QosRegulatorSpec) -> Direction:
    """The fields of one direction as written; QosRangeError when the
    regulator cannot express them."""
    if d.raw is not None:
        rate = check_raw_rate(d.raw)
    elif d.tps is not None:
        rate = rate_from_tps(d.tps, reg.clock_hz)
    else:
        assert d.mbps is not None
        rate = rate_from_mbps(d.mbps, reg.clock_hz, reg.transaction_bytes)
    burst = DEFAULT_BURST if d.burst is None else d.burst
    peak = DEFAULT_PEAK if d.peak is None else d.peak
    encode_burst(burst)
    encode_peak(peak)
    if peak < P_MAX and peak << (R_BITS - P_BITS) < rate:  # 0xFF: the highest peak there is
        raise QosRangeError(f"peak 0x{peak:x} ({peak}/256 per cycle) is below the average rate 0x{rate:x} "
                            f"({rate}/4096 per cycle)")
    return Direction(rate, burst, peak)


@dataclass(frozen=True)
class Programmed:
    """A regulator with the values the hypervisor writes (``struct cfg_qos``)."""

    spec: QosRegulatorSpec
    read: Direction | None
    write: Direction | None
    devices: tuple[tuple[str, str], ...]  # (device, VM) of every passed-through device behind it
    source: str  # the device whose qos: block gave the settings

    @property
    def cntl(self) -> int:
        return (EN_AR_RATE if self.read else 0) | (EN_AW_RATE if self.write else 0)

    def registers(self) -> dict[str, int]:
        """Register name -> value, in programming order (qos_cntl last)."""
        out: dict[str, int] = {}
        for prefix, d in (("ar", self.read), ("aw", self.write)):
            out.update(d.registers(prefix) if d else {f"{prefix}_r": 0, f"{prefix}_b": 0, f"{prefix}_p": 0})
        out["qos_cntl"] = self.cntl
        return out


# --- parsing (called by bulkhead.schema) ----------------------------------------


def _parse_regulators(r: Reader, node: YNode, path: str = "qos_regulators") -> tuple[QosRegulatorSpec, ...]:
    def one(n: YNode, q: str) -> QosRegulatorSpec:
        m = r.mapping(n, q, PLATFORM_KEYS, PLATFORM_KEYS,
                      "a regulator {name, base, clock_hz, transaction_bytes, devices, access}")
        access = r.choice(m["access"], _join(q, "access"), ACCESS)
        return QosRegulatorSpec(
            name=r.name(m["name"], _join(q, "name"), "a regulator name"),
            base=r.address(m["base"], _join(q, "base")),
            clock_hz=r.integer(m["clock_hz"], _join(q, "clock_hz"),
                               f"a frequency in Hz (integer 1000-{MAX_CLOCK_HZ})", 1000, MAX_CLOCK_HZ),
            transaction_bytes=r.integer(m["transaction_bytes"], _join(q, "transaction_bytes"),
                                        "a number of bytes (integer 1-4096)", 1, 4096),
            devices=r.each(m["devices"], _join(q, "devices"), lambda n2, q2: r.string(n2, q2, "a device name"),
                           "a list of device names"),
            access="smc" if access == "smc" else "mmio",
            path=q,
        )

    return r.each(node, path, one, "a list of regulators")


def parse_direction(r: Reader, node: YNode, path: str) -> QosDirectionSpec:
    m = r.mapping(node, path, DIRECTION_KEYS, (), "a mapping {raw | tps | mbps, burst, peak}")
    forms = [k for k in ("raw", "tps", "mbps") if k in m]
    if len(forms) != 1:
        raise r.fail(node, path, "give the average rate in exactly one of raw, tps, mbps"
                     + (f" (got {', '.join(forms)})" if forms else ""))

    def opt(key: str, what: str) -> int | None:
        return r.integer(m[key], _join(path, key), what, 0) if key in m else None

    return QosDirectionSpec(
        raw=opt("raw", "a rate field value (integer, e.g. 0x20)"),
        tps=opt("tps", "a rate in transactions per second (integer)"),
        mbps=opt("mbps", "a rate in MB/s (integer)"),
        burst=opt("burst", "a burstiness in transactions (integer)"),
        peak=opt("peak", "a peak-rate field value (integer, e.g. 0x80)"),
        path=path,
    )


def parse_device(r: Reader, m: Keys, name: str, path: str) -> AddToVm:
    """Device ``name``'s ``qos: {read, write}``: its QoS-400 settings."""
    if "qos" not in m:
        return lambda vm: vm
    q = _join(path, "qos")
    qm = r.mapping(m["qos"], q, ("read", "write"), (), "a mapping {read, write}")
    if not qm:
        raise r.fail(m["qos"], q, "an empty qos block: give read and/or write")
    dq = DeviceQosSpec(
        device=name,
        read=parse_direction(r, qm["read"], _join(q, "read")) if "read" in qm else None,
        write=parse_direction(r, qm["write"], _join(q, "write")) if "write" in qm else None,
        path=q,
    )
    return lambda vm: dataclasses.replace(vm, qos=(*vm.qos, dq))


def ram_windows(p: Platform) -> list[Range]:
    """The 4 KiB pages of regulator blocks that lie in RAM (a test's scratch
    window): the allocator keeps VM memory out of them."""
    return list(dict.fromkeys(Range(reg.base & ~0xFFF, 0x1000) for reg in p.qos_regulators
                              if p.in_ram(Range(reg.base, 4))))


# --- checks ---------------------------------------------------------------------


def check_platform(p: Platform) -> list[Diagnostic]:
    """Errors in the platform's ``qos_regulators:``."""
    errors: list[Diagnostic] = []
    at = p.locs.diag
    names: dict[str, str] = {}
    owner: dict[str, str] = {}
    for reg in p.qos_regulators:
        if reg.name in names:
            errors.append(at(_join(reg.path, "name"), f"duplicate regulator name '{reg.name}' "
                                                      f"(also {names[reg.name]})"))
        names.setdefault(reg.name, reg.path)
        if reg.base % 4:
            errors.append(at(_join(reg.path, "base"), f"base 0x{reg.base:x} is not 4-byte aligned"))
        elif reg.base // 4096 != (reg.base + BLOCK_SIZE - 1) // 4096:
            errors.append(at(_join(reg.path, "base"), f"the register block at 0x{reg.base:x} crosses a 4 KiB page"))
        if not (p.mmio.base <= reg.base and reg.base + BLOCK_SIZE <= p.mmio.end) and \
                not p.in_ram(Range(reg.base, BLOCK_SIZE)):
            errors.append(at(_join(reg.path, "base"), f"base 0x{reg.base:x} is outside the MMIO window "
                                                      f"({p.mmio}) and RAM ({p.ram})"))
        for what, r in (("the hypervisor area", p.hypervisor), ("the staging area", p.staging)):
            if r.base < reg.base + BLOCK_SIZE and reg.base < r.end:
                errors.append(at(_join(reg.path, "base"), f"base 0x{reg.base:x} is inside {what} ({r})"))
        if not reg.devices:
            errors.append(at(_join(reg.path, "devices"), "a regulator needs at least one device"))
        for i, dev in enumerate(reg.devices):
            q = f"{reg.path}.devices[{i}]"
            if p.device(dev) is None:
                errors.append(at(q, f"unknown device '{dev}'"))
            elif dev in owner:
                errors.append(at(q, f"device '{dev}' is already behind regulator '{owner[dev]}'"))
            owner.setdefault(dev, reg.name)
    return errors


def check(s: SystemSpec) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """(errors, warnings) about QoS settings and DMA isolation of ``s``."""
    errors: list[Diagnostic] = []
    warnings: list[Diagnostic] = []
    p = s.platform
    at = s.locs.diag
    for window in ram_windows(p):
        for vm in s.vms:
            for m in vm.memory:
                if m.pa is not None and Range(m.pa, m.size).overlaps(window):
                    errors.append(at(_join(m.path, "pa"), f"PA range {Range(m.pa, m.size)} overlaps the QoS "
                                                          f"regulator window {window} in RAM"))
    by_reg: dict[str, list[tuple[DeviceQosSpec, str]]] = {}
    for vm in s.vms:
        for dq in vm.qos:
            reg = p.regulator_of(dq.device)
            if reg is None:
                errors.append(at(dq.path, f"device '{dq.device}' has no QoS-400 regulator on platform "
                                          f"'{p.name}'"))
                continue
            ok = True
            for d in (dq.read, dq.write):
                if d is None:
                    continue
                try:
                    resolve(d, reg)
                except QosRangeError as exc:
                    errors.append(at(d.path, str(exc)))
                    ok = False
            if ok:
                by_reg.setdefault(reg.name, []).append((dq, vm.name))
    if len(by_reg) > MAX_PROGRAMMED:
        errors.append(at("vms", f"{len(by_reg)} QoS-400 regulators to program; the hypervisor takes at most "
                                f"{MAX_PROGRAMMED}"))
    for name, settings in by_reg.items():
        reg = next(r for r in p.qos_regulators if r.name == name)
        first, first_vm = settings[0]
        for dq, _ in settings[1:]:
            if (_resolved(dq, reg)) != _resolved(first, reg):
                errors.append(at(dq.path, f"regulator '{name}' serves both '{first.device}' ({first.path}) and "
                                          f"'{dq.device}', which ask for different settings; one regulator "
                                          "applies one setting to all its devices"))
        owners = _owners(s, reg)
        vms = list(dict.fromkeys(vm for _, vm in owners))
        if len(vms) > 1:
            listing = ", ".join(f"'{vm}' ({', '.join(d for d, v in owners if v == vm)})" for vm in vms)
            warnings.append(at(first.path, f"regulator '{name}' serves devices of {len(vms)} VMs: {listing}; "
                                           "QoS-400 regulates the whole master, so these settings slow every "
                                           "one of them"))
    return errors, warnings


def _resolved(dq: DeviceQosSpec, reg: QosRegulatorSpec) -> tuple[Direction | None, Direction | None]:
    return (resolve(dq.read, reg) if dq.read else None, resolve(dq.write, reg) if dq.write else None)


def _owners(s: SystemSpec, reg: QosRegulatorSpec) -> list[tuple[str, str]]:
    """(device, VM) of every passed-through device behind ``reg``."""
    return [(dev, vm.name) for vm in s.vms for dev in dict.fromkeys(vm.devices) if dev in reg.devices]


# --- resolved plan, report ------------------------------------------------------------


def plan(s: SystemSpec) -> list[Programmed]:
    """The regulators the hypervisor programs at boot (checked config)."""
    out: list[Programmed] = []
    done: set[str] = set()
    for vm in s.vms:
        for dq in vm.qos:
            reg = s.platform.regulator_of(dq.device)
            if reg is None or reg.name in done:
                continue
            done.add(reg.name)
            read, write = _resolved(dq, reg)
            out.append(Programmed(reg, read, write, tuple(_owners(s, reg)), dq.device))
    return out


QOS_HEAD = ("REGULATOR", "DEVICES", "DIR", "RATE", "TRANS/S", "MB/S", "BURST", "PEAK", "REGISTERS")


def report_rows(s: SystemSpec) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for pr in plan(s):
        reg = pr.spec
        devs = ",".join(f"{d}@{vm}" for d, vm in pr.devices)
        regs = pr.registers()
        first = True
        for name, d in (("read", pr.read), ("write", pr.write)):
            if d is None:
                continue
            prefix = "ar" if name == "read" else "aw"
            rows.append((reg.name if first else "", devs if first else "", name, f"0x{d.rate:03x}",
                         _fmt_tps(tps_of(d.rate, reg.clock_hz)).strip(),
                         f"{mbps_of(d.rate, reg.clock_hz, reg.transaction_bytes):.4g}", str(d.burst),
                         f"0x{d.peak:02x}",
                         " ".join(f"{k}=0x{regs[k]:08x}" for k in (f"{prefix}_r", f"{prefix}_b", f"{prefix}_p"))))
            first = False
        rows.append(("", "", "", "", "", "", "", "", f"qos_cntl=0x{pr.cntl:08x} @0x{reg.base + REGISTERS['qos_cntl']:x}"
                     f" ({reg.access})"))
    return rows


def report(system: Resolved) -> str:
    """The QoS part of ``bulkhead check`` ('' when nothing is regulated)."""
    s = system.spec
    rows = report_rows(s)
    if not rows:
        return ""
    table = [QOS_HEAD, *rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(QOS_HEAD))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)).rstrip() for r in table]
    clocks = ", ".join(f"{pr.spec.name}: {pr.spec.clock_hz / 1e6:g} MHz x {pr.spec.transaction_bytes} B"
                       for pr in plan(s))
    return "\n".join(["", f"QoS-400 regulation ({clocks}; rate = RATE/4096 transactions per cycle):", *lines,
                      "note: QEMU models neither QoS-400 nor bus contention"]) + "\n"


def document(system: Resolved) -> list[dict[str, Any]]:
    """The programmed regulators for ``bulkhead check --json``."""
    out: list[dict[str, Any]] = []
    for pr in plan(system.spec):
        reg = pr.spec
        dirs: dict[str, Any] = {}
        for name, d in (("read", pr.read), ("write", pr.write)):
            if d is not None:
                dirs[name] = {"rate": d.rate, "burst": d.burst, "peak": d.peak,
                              "tps": tps_of(d.rate, reg.clock_hz),
                              "mbps": mbps_of(d.rate, reg.clock_hz, reg.transaction_bytes),
                              "peak_tps": peak_tps_of(d.peak, reg.clock_hz)}
        out.append({"name": reg.name, "base": reg.base, "access": reg.access, "clock_hz": reg.clock_hz,
                    "transaction_bytes": reg.transaction_bytes,
                    "devices": [{"device": d, "vm": vm} for d, vm in pr.devices],
                    "registers": pr.registers(), **dirs})
    return out


# --- parse, config.c, features -------------------------------------------


def parse_platform(r: Reader, top: Keys, p: Platform) -> Platform:
    if "qos_regulators" not in top:
        return p
    return dataclasses.replace(p, qos_regulators=_parse_regulators(r, top["qos_regulators"]))


def emit_system(out: CSource, system: SystemView) -> list[Field]:
    """The struct cfg_qos array of the regulators to program; struct
    cfg_system's ``nqos`` and ``qos``."""
    programmed = plan(system.spec)
    if not programmed:
        return []
    rows = []
    for pr in programmed:
        regs = pr.registers()
        rows.append([("name", cstr(pr.spec.name)),
                     ("devices", cstr(",".join(f"{d}@{vm}" for d, vm in pr.devices))),
                     ("base", hexa(pr.spec.base)),
                     ("flags", "CFG_QOS_SMC" if pr.spec.access == "smc" else "0"),
                     ("cntl", hexa(regs["qos_cntl"]))]
                    + [(k, hexa(regs[k])) for k in ("ar_r", "ar_b", "ar_p", "aw_r", "aw_b", "aw_p")])
    out.line()
    out.array("static const struct cfg_qos qos_regulators", struct_rows(rows))
    return [("nqos", str(len(programmed))), ("qos", "qos_regulators")]


def needs(system: SystemView) -> list[Need]:
    """QoS-400 when the platform has regulators (the guests may set them at run time)."""
    return [Need("QOS", "the platform", "has qos_regulators (QoS-400)")] if system.platform.qos_regulators else []


MECHANISM = Mechanism(
    name="qos", rank=50, docs="docs/qos.md", features={"QOS": ("isolation/qos400.c", "isolation/qos400_regs.c")},
    platform_keys=("qos_regulators",), system_keys=(), vm_keys=(), region_keys=(), device_keys=("qos",),
    parse_platform=parse_platform, parse_system=None, parse_vm=None, parse_region=None,
    check_device=None, parse_device=parse_device,
    check_platform=check_platform, check=check, ipa_items=None, reserved_ram=ram_windows, guest_params=None,
    limits=(("QOS400_MAX", "isolation/qos400.h", MAX_PROGRAMMED, "bulkhead.config.qos.MAX_PROGRAMMED"),),
    emit_platform=None,
    emit_tables=None, emit_vm=None, emit_system=emit_system, needs=needs,
)
