# SPDX-License-Identifier: Apache-2.0
"""The cache/DRAM model QEMU plugin from the toolchain's side (docs/model.md).

``bulkhead run --model`` writes the plugin's input (the platform's cache and
DRAM model and who owns which physical page: every VM's memory, colored or
not, shared memory, the hypervisor's own region), loads
``build/cachemodel/libcachemodel.so`` (built by ``scripts/setup.sh``) into
QEMU under ``-icount`` and reads back its JSON report. The plugin itself
(``tools/cachemodel``) is GPL-2.0-or-later: it includes QEMU's plugin API
header; this module only writes and reads files.

QEMU models no caches and no DRAM: these figures come from the plugin's
model fed with QEMU's access stream. Who evicts whom is a property of the
address streams and the placement; miss *rates* depend on how QEMU
interleaves vCPUs under -icount and are never comparable with hardware.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bulkhead.base.errors import BuildError, ConfigError, Diagnostic, RunError
from bulkhead.config import bandwidth as bw_plan
from bulkhead.config.color import Colors
from bulkhead.config.model import PAGE, CacheModelSpec, Platform
from bulkhead.layout.placement import System

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "build" / "cachemodel" / "libcachemodel.so"
API = ROOT / "build" / "qemu-plugin-api"  # QEMU's qemu-plugin.h, fetched by scripts/setup.sh
SOURCES = ROOT / "tools" / "cachemodel"
MAP_NAME = "cachemodel.map"
REPORT_NAME = "cachemodel.json"
RUN_REPORT_SUFFIX = ".cachemodel.json"  # experiment --model: logs/<config>-r<rep>.cachemodel.json per run
HYPERVISOR = "hypervisor"
CAVEAT = ("QEMU models no caches or DRAM: these are the plugin's model (docs/model.md) fed with QEMU's "
          "accesses; who-evicts-whom is exact for the model, miss rates depend on QEMU's vCPU "
          "interleaving under -icount and are never comparable with hardware.")
PERCPU_SYMBOL = "cpu_data"  # struct cpu cpu_data[ARCH_MAX_CPUS] (hypervisor/arch/aarch64/cpu.c)
# Where each CPU's regulator keeps its period index (hypervisor/isolation/bw.c,
# struct bw_cpu bw_cpus[]; clk.epoch is stored at every period end), read from
# the ELF's debug information with gdb (None: no per-period series).
PERIOD_FIELD = "bw_cpus[{cpu}].clk.epoch"
GDB = "gdb-multiarch"
MODELLED = "modelled"  # the label of every figure of the timing model (CSV, plots, report)
CPU_H = ROOT / "hypervisor" / "arch" / "aarch64" / "cpu.h"
NM = "aarch64-linux-gnu-nm"
MAX_OWNERS = 31  # CM_MAX_OWNERS - 1 (tools/cachemodel/model.h; owner 0 is "nobody")
# Timing mode (docs/model.md "Timing mode"): the vCPUs run side by side
# (MTTCG) and one more than this much modelled time ahead of the slowest
# running vCPU waits (run --timing --quantum).
DEFAULT_QUANTUM_NS = 1000
TIMING_ACCEL = ["-accel", "tcg,thread=multi"]
# What a regulator counts in timing mode (docs/model.md "Timing mode"): printed
# by `run --timing` when a VM is regulated.
TIMING_REGULATOR_WARNING = (
    "timing mode with a bandwidth regulator: the regulator counts cycles of QEMU's virtual clock, which "
    "under MTTCG is host time (QEMU 10.0 lets no plugin move it), not modelled time and not DRAM lines; "
    "its periods and budgets are host-time figures (docs/model.md \"Timing mode\")")
MARKER_IMM = 0x5B  # hint #0x5b, x0 = phase id (0: end), x1 = virtual time in ns (guests/lib/include/bench.h)


def timing_quantum(timing: bool, quantum_ns: int | None) -> int | None:
    """The timing mode's quantum in ns from ``--timing [--quantum NS]`` (None:
    not timing mode); RunError for a quantum without --timing or not > 0."""
    if quantum_ns is not None and not timing:
        raise RunError("--quantum is the timing mode's: give --timing too")
    if not timing:
        return None
    if quantum_ns is not None and quantum_ns <= 0:
        raise RunError(f"the timing mode's quantum must be > 0 ns, not {quantum_ns}")
    return quantum_ns if quantum_ns is not None else DEFAULT_QUANTUM_NS


def plugin_path() -> Path:
    """The plugin (``BULKHEAD_CACHEMODEL`` overrides); BuildError if missing.
    Once setup fetched QEMU's header, the default plugin is rebuilt here when
    its sources changed (make, under a lock: concurrent runs share it)."""
    override = os.environ.get("BULKHEAD_CACHEMODEL")
    path = Path(override) if override else PLUGIN
    if not override and (API / "qemu-plugin.h").is_file():
        _make()
    if not path.is_file():
        raise BuildError(f"{path} not found: the cache model plugin is built by "
                         f"'scripts/setup.sh cachemodel' (docs/model.md)")
    return path


def check_platform(p: Platform) -> list[Diagnostic]:
    """What the model needs from the rest of the platform file (located)."""
    spec = p.cachemodel
    if spec is None:
        return [p.locs.diag("", f"platform '{p.name}' has no 'model:' section: nothing to model "
                                f"(docs/model.md)")]
    col = p.coloring
    diags = []
    if col is None or col.llc_size is None:
        diags.append(p.locs.diag(spec.path, "the cache model needs the LLC geometry: give coloring.llc "
                                            "{size, ways, line}"))
    if spec.row_shift is not None:
        if col is None or not col.bank_bits:
            diags.append(p.locs.diag(f"{spec.path}.dram", "the DRAM bank model needs the bank bits: give "
                                                          "coloring.bank_bits"))
        elif spec.row_shift <= max(col.bank_bits):
            diags.append(p.locs.diag(f"{spec.path}.dram.row_shift",
                                     f"row bits start at bit {spec.row_shift}, not above the bank bits "
                                     f"({', '.join(map(str, col.bank_bits))})"))
    return diags


def _make() -> None:
    PLUGIN.parent.mkdir(parents=True, exist_ok=True)
    with open(PLUGIN.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        res = subprocess.run(["make", "-s", "-C", str(SOURCES), f"API={API}", f"OUT={PLUGIN.parent}"],
                             capture_output=True, text=True)
    if res.returncode != 0:
        raise BuildError(f"building the cache model plugin failed:\n{res.stdout}{res.stderr}".rstrip())


def spec_of(system: System) -> CacheModelSpec:
    """The platform's model; ConfigError (located) if it cannot be used."""
    diags = check_platform(system.platform)
    if diags:
        raise ConfigError(diags)
    assert system.platform.cachemodel is not None
    return system.platform.cachemodel


def _runs(pages: Sequence[int]) -> list[tuple[int, int]]:
    """Sorted pages -> (base, size) runs of consecutive pages."""
    runs: list[tuple[int, int]] = []
    for pa in sorted(pages):
        if runs and runs[-1][0] + runs[-1][1] == pa:
            runs[-1] = (runs[-1][0], runs[-1][1] + PAGE)
        else:
            runs.append((pa, PAGE))
    return runs


def _region(pa: int, size: int, colors: Colors | None) -> list[tuple[int, int]]:
    if colors is None:
        return [(pa, size)]
    return _runs(list(colors.pages(pa, size // PAGE)))  # the hypervisor's walk (test_config_color_xcheck)


def owners(system: System) -> list[tuple[str, str, list[tuple[int, int]]]]:
    """(name, kind, physical ranges) per owner, in plugin id order from 1."""
    p = system.platform
    out: list[tuple[str, str, list[tuple[int, int]]]] = [
        (HYPERVISOR, "hyp", [(p.hypervisor.base, p.hypervisor.size), (p.staging.base, p.staging.size)]),
    ]
    for vm in system.vms:
        ranges = [r for m in vm.memory for r in _region(m.pa, m.size, m.colors)]
        if vm.pt_colors is not None and vm.pt_pages:
            ranges += _region(vm.pt_pa, vm.pt_pages * PAGE, vm.pt_colors)
        out.append((vm.name, "vm", ranges))
    for sh in system.shmems:
        out.append((f"shmem:{sh.name}", "shmem", _region(sh.pa, sh.size, sh.colors)))
    return out


def percpu_of(elf: Path) -> tuple[int, int] | None:
    """(address, stride) of the hypervisor's per-CPU data, whose address each
    CPU keeps in TPIDR_EL2: how the plugin tells which CPU runs (None: not
    found; the plugin then falls back to QEMU's vCPU index)."""
    nm = shutil.which(NM)
    m = re.search(r"^#define\s+ARCH_MAX_CPUS\s+(\d+)", CPU_H.read_text(), re.M) if CPU_H.is_file() else None
    if nm is None or m is None:
        return None
    ncpus = int(m.group(1))
    out = subprocess.run([nm, "-S", str(elf)], capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[3] == PERCPU_SYMBOL and int(parts[1], 16) % ncpus == 0:
            return int(parts[0], 16), int(parts[1], 16) // ncpus
    return None


def period_addresses(elf: Path, cpus: Sequence[int]) -> dict[int, int]:
    """The (EL2 virtual) address of each CPU's regulation period index in the
    hypervisor image (PERIOD_FIELD; empty without gdb or debug information)."""
    gdb = shutil.which(GDB)
    if gdb is None or not cpus:
        return {}
    args = [gdb, "-nx", "-batch"]
    for cpu in cpus:
        args += ["-ex", f"print/x &{PERIOD_FIELD.format(cpu=cpu)}"]
    res = subprocess.run([*args, str(elf)], capture_output=True, text=True)
    found = [int(m.group(1), 16) for m in re.finditer(r"^\$\d+ = (0x[0-9a-f]+)$", res.stdout, re.M)]
    return dict(zip(cpus, found, strict=False)) if len(found) == len(cpus) else {}


def timing_lines(system: System, elf: Path | None) -> list[str]:
    """The map file's timing model lines (ps, integers) and the regulated
    CPUs' period index addresses; none without ``model.timing``."""
    spec = spec_of(system)
    t = spec.timing
    if t is None:
        return []
    ps = [round(t.cpi * 1e6 / t.cpu_mhz), round(t.llc_hit_ns * 1000), round(t.row_empty_ns * 1000),
          round(t.row_hit_ns * 1000), round(t.row_conflict_ns * 1000), round(64 * 1e6 / t.dram_mbps),
          round(t.window_ns * 1000)]
    out = ["timing " + " ".join(str(v) for v in ps)]
    if t.l1d is not None and spec.l1d is None:
        out.append(f"timing_l1d 0x{t.l1d[0]:x} {t.l1d[1]} {t.l1d[2]}")
    periods = {cpu: vm.spec.bandwidth.period_us for vm in system.vms if vm.spec.bandwidth is not None
               for cpu in vm.cpus}
    if elf is not None:
        for cpu, addr in sorted(period_addresses(elf, sorted(periods)).items()):
            out.append(f"regulator {cpu} 0x{addr:x} {periods[cpu] * 1000}")
    return out


def map_text(system: System, elf: Path | None = None, quantum_ns: int | None = None) -> str:
    """The plugin's input file (tools/cachemodel/mapfile.h); ``elf``: the
    hypervisor image, for the per-CPU data address; ``quantum_ns``: timing
    mode with that lock-step quantum (the platform needs ``model.timing``)."""
    spec = spec_of(system)
    p = system.platform
    col = p.coloring
    assert col is not None and col.llc_size is not None and col.llc_ways and col.llc_line
    lines = [f"# bulkhead cache model input: {system.spec.file if hasattr(system.spec, 'file') else ''}".rstrip(),
             f"llc 0x{col.llc_size:x} {col.llc_ways} {col.llc_line} {spec.replacement} {spec.seed}"]
    if spec.l1d is not None:
        lines.append(f"l1d 0x{spec.l1d[0]:x} {spec.l1d[1]} {spec.l1d[2]}")
    if spec.row_shift is not None:
        lines.append(f"dram {spec.row_shift} " + " ".join(str(b) for b in col.bank_bits))
    lines.append(f"ram 0x{p.ram.base:x} 0x{p.ram.size:x}")
    percpu = percpu_of(elf) if elf is not None else None
    if percpu is not None:
        lines.append(f"percpu 0x{percpu[0]:x} 0x{percpu[1]:x}")
    lines += timing_lines(system, elf)
    if quantum_ns is not None:
        if spec.timing is None:
            raise ConfigError([p.locs.diag(spec.path, "timing mode (--timing) needs the timing model: give "
                                                      "model.timing (docs/model.md)")])
        if quantum_ns <= 0:
            raise ConfigError([Diagnostic("", f"the timing mode's quantum must be > 0 ns, not {quantum_ns}")])
        lines.append(f"lockstep {quantum_ns * 1000}")
    table = owners(system)
    if len(table) > MAX_OWNERS:
        raise BuildError(f"the cache model tells at most {MAX_OWNERS} owners apart (the hypervisor, VMs and "
                         f"shared-memory regions); this system has {len(table)}")
    for i, (name, kind, _) in enumerate(table, start=1):
        lines.append(f"owner {i} {kind} {name}")
    for vm in system.vms:
        for cpu in vm.cpus:
            lines.append(f"cpu {cpu} {vm.index + 2}")
    ram_end = p.ram.base + p.ram.size
    for i, (_, _, ranges) in enumerate(table, start=1):
        for base, size in ranges:
            lo, hi = max(base, p.ram.base), min(base + size, ram_end)
            if lo < hi:
                lines.append(f"range 0x{lo:x} 0x{hi - lo:x} {i}")
    return "\n".join(lines) + "\n"


def qemu_args(system: System, out: Path, elf: Path | None = None,
              quantum_ns: int | None = None) -> tuple[list[str], Path]:
    """QEMU arguments loading the plugin for ``system`` (input written into
    ``out``; ``elf``: the hypervisor image), and where its report will be.
    ``quantum_ns``: timing mode (MTTCG, the plugin's lock-step at that quantum)."""
    plugin = plugin_path()
    out.mkdir(parents=True, exist_ok=True)
    mapfile = out / MAP_NAME
    mapfile.write_text(map_text(system, elf, quantum_ns))
    report = out / REPORT_NAME
    report.unlink(missing_ok=True)
    accel = TIMING_ACCEL if quantum_ns is not None else []
    return [*accel, "-plugin", f"{plugin},map={mapfile},out={report}"], report


# --- the report ------------------------------------------------------------

@dataclass(frozen=True)
class Counters:
    llc_accesses: int
    llc_misses: int
    l1d_accesses: int
    l1d_misses: int
    dram_accesses: int
    dram_bytes: int
    writebacks: int
    row_hits: int
    row_empty: int
    row_conflicts: int
    el2_accesses: int  # accesses to this owner's memory made at EL2 (by the hypervisor)
    evicted_by: dict[str, int]
    row_conflicts_by: dict[str, int]

    def evicted_by_others(self, me: str) -> int:
        """Lines of ``me`` evicted by VMs and shared memory (not itself, not the hypervisor)."""
        return sum(n for who, n in self.evicted_by.items() if who not in (me, HYPERVISOR))

    def conflicts_by_others(self, me: str) -> int:
        """Row conflicts ``me`` suffered on a row another owner had opened."""
        return sum(n for who, n in self.row_conflicts_by.items() if who != me)

    @staticmethod
    def parse(d: dict[str, Any]) -> Counters:
        by = ("evicted_by", "row_conflicts_by")
        plain = {k: int(v) for k, v in d.items() if k not in by}
        return Counters(**plain, evicted_by={str(k): int(v) for k, v in d["evicted_by"].items()},
                        row_conflicts_by={str(k): int(v) for k, v in d["row_conflicts_by"].items()})


@dataclass(frozen=True)
class Owner:
    name: str
    kind: str  # hyp | vm | shmem | none
    run: Counters
    phase: Counters | None  # None: no phase marker seen
    phase_marks: int
    phase_ns: int  # virtual time inside the marked phase

    @property
    def measured(self) -> Counters:
        """The marked phase's counters if there was one, else the whole run's."""
        return self.phase if self.phase is not None else self.run


@dataclass(frozen=True)
class Report:
    owners: tuple[Owner, ...]
    cpus: tuple[dict[str, Any], ...]
    raw: dict[str, Any]

    def owner(self, name: str) -> Owner:
        for o in self.owners:
            if o.name == name:
                return o
        raise KeyError(name)


def load_report(path: Path) -> Report:
    try:
        raw = json.loads(path.read_text())
    except FileNotFoundError:
        raise BuildError(f"{path}: the cache model wrote no report (did QEMU exit normally?)") from None
    owners_ = tuple(
        Owner(o["name"], o["kind"], Counters.parse(o["run"]),
              Counters.parse(o["phase"]) if o["phase"] is not None else None,
              int(o["phase_marks"]), int(o["phase_ns"]))
        for o in raw["owners"]
    )
    return Report(owners_, tuple(raw["cpus"]), raw)


def bytes_per_period(owner: Owner, period_us: int) -> float | None:
    """Modelled DRAM bytes per ``period_us`` of virtual time over the marked
    phase (None without a phase)."""
    if owner.phase is None or owner.phase_ns <= 0:
        return None
    return owner.phase.dram_bytes * period_us * 1000 / owner.phase_ns


# --- the timing model --------------------------------------------------------

CPU_CYCLES = 0x11  # the PMU event QEMU counts for every regulated CPU (cycles = instructions under -icount)


def model_time_ns(report: Report, vm: str) -> float | None:
    """VM ``vm``'s modelled time in ns (docs/model.md "Timing model"): over
    its marked phase if it marked one (the longest of its CPUs' in-phase
    times: they run in parallel), else over the whole run; None without the
    timing model."""
    timing = report.raw.get("timing")
    if timing is None:
        return None
    mine = {int(c["index"]) for c in report.cpus if c["vm"] == vm}
    phase = report.owner(vm).phase is not None
    key = "phase_ps" if phase else "modelled_ps"
    times = [int(c[key]) for c in timing["cpus"] if int(c["index"]) in mine]
    return max(times) / 1000 if times else None


def slowdown(report: Report, baseline: Report, vm: str) -> float | None:
    """Modelled slowdown of ``vm``: its modelled time here over its modelled
    time in ``baseline`` (e.g. with interference / solo)."""
    t, t0 = model_time_ns(report, vm), model_time_ns(baseline, vm)
    return t / t0 if t is not None and t0 else None


@dataclass(frozen=True)
class PeriodSeries:
    """One regulated CPU's regulation periods as the hypervisor closed them:
    (period index, modelled DRAM bytes, instructions, modelled ps) each."""

    cpu: int
    period_ns: int
    entries: tuple[tuple[int, int, int, int], ...]
    dropped: int


def period_series(report: Report) -> list[PeriodSeries]:
    return [PeriodSeries(int(p["cpu"]), int(p["period_ns"]),
                         tuple((int(e[0]), int(e[1]), int(e[2]), int(e[3])) for e in p["series"]), int(p["dropped"]))
            for p in report.raw.get("periods", [])]


def vm_period_bytes(report: Report, system: System, vm: str) -> list[tuple[int, int]]:
    """(period index, modelled DRAM bytes of all the VM's CPUs) per complete
    regulation period, the first (partial: boot) and last one left out."""
    cpus = next((set(v.cpus) for v in system.vms if v.name == vm), set())
    total: dict[int, int] = {}
    for ser in period_series(report):
        if ser.cpu in cpus:
            for index, nbytes, _, _ in ser.entries:
                total[index] = total.get(index, 0) + nbytes
    keys = sorted(total)[1:-1]
    return [(k, total[k]) for k in keys]


def bounding_unit(system: System, vm: str) -> str | None:
    """What actually bounded VM ``vm``'s regulator on QEMU, in words (None:
    not regulated): QEMU counts no memory events, so a VM regulated on the
    cycle counter, or on an event QEMU lacks (the platform's fallback,
    CPU_CYCLES), was bounded in CPU cycles, i.e. instructions under -icount
    shift 0, whatever its budget was written in."""
    spec = next((v.spec for v in system.vms if v.name == vm), None)
    if spec is None:
        return None
    plan = bw_plan.plan(system.platform, spec)
    if plan is None:
        return None
    events = {ch.number_of(i) for ch in plan.channels for i in range(len(ch.shares))}
    pb = system.platform.bandwidth
    fallback = pb.fallback.event if pb is not None and pb.fallback is not None else None
    if plan.cycles or events == {CPU_CYCLES} or fallback == CPU_CYCLES:
        return "CPU cycles (instructions under -icount shift 0)"
    return "PMU events " + ", ".join(f"0x{e:x}" for e in sorted(events))


IDLE_SHARE = 0.01  # a period moving less than this share of the busiest period's bytes is idle


def active_periods(series: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The periods of ``series`` in which the VM was active: the leading and
    trailing periods moving less than :data:`IDLE_SHARE` of the busiest
    period's bytes (before the interferer started, after it stopped) are
    left out, so that a mean describes its traffic while it ran."""
    if not series:
        return []
    floor = max(b for _, b in series) * IDLE_SHARE
    busy = [i for i, (_, b) in enumerate(series) if b > floor]
    return series[busy[0]:busy[-1] + 1] if busy else series


def regulation(report: Report, system: System, vm: str) -> dict[str, Any] | None:
    """Regulated VM ``vm``'s budget beside its modelled DRAM traffic per
    regulation period (docs/model.md "Regulated bandwidth"): None if it is
    not regulated or no period was seen (no timing model, no gdb)."""
    spec = next((v.spec for v in system.vms if v.name == vm), None)
    plan = bw_plan.plan(system.platform, spec) if spec is not None else None
    series = vm_period_bytes(report, system, vm)
    if plan is None or not series:
        return None
    active = active_periods(series)
    values = [b for _, b in active]
    mean = sum(values) / len(values)
    budget = sum(ch.budget for ch in plan.channels)
    unit = bounding_unit(system, vm) or "-"
    return {
        "vm": vm, "period_us": plan.period_us, "unit": unit, "budget_per_period": budget,
        "budget_mbps_notional": plan.mbps, "budget_bytes_per_period_notional": plan.mbps * plan.period_us,
        "periods": len(values), "idle_periods_left_out": len(series) - len(active),
        "dram_bytes_per_period_mean": mean, "dram_bytes_per_period_max": max(values),
        "dram_mbps_mean": mean / plan.period_us,  # B/us = MB/s
        "series": series, "label": MODELLED,
        "bound": (f"{vm}: bounded by {unit}: {budget} per {plan.period_us} us (written as {plan.mbps:.0f} MB/s at "
                  f"the platform's bytes per event); modelled DRAM traffic {mean:,.0f} B per period on average "
                  f"(max {max(values):,}), {mean / plan.period_us:,.0f} MB/s ({MODELLED})"),
    }


COLUMNS = ("OWNER", "SCOPE", "LLC ACC", "AT EL2", "LLC MISS", "EVICTED BY OTHERS", "BY HYP", "DRAM ACC",
           "ROW CONFL", "BY OTHERS", "DRAM B/PERIOD")


def rows(report: Report, period_us: int) -> list[list[str]]:
    out = []
    for o in report.owners:
        if o.kind == "none" and not o.run.llc_accesses:
            continue
        c = o.measured
        bpp = bytes_per_period(o, period_us)
        out.append([o.name, "phase" if o.phase is not None else "run", str(c.llc_accesses), str(c.el2_accesses),
                    str(c.llc_misses), str(c.evicted_by_others(o.name)), str(c.evicted_by.get(HYPERVISOR, 0)),
                    str(c.dram_accesses), str(c.row_conflicts), str(c.conflicts_by_others(o.name)),
                    "-" if bpp is None else f"{bpp:.0f}"])
    return out


CPU_COLUMNS = ("CPU", "VM", "ACCESSES", "AT EL2", "LLC MISS", "L1D MISS", "DRAM ACC", "ROW CONFL BY OTHERS",
               "EVICTED (OWNER: LINES)")


def cpu_rows(report: Report) -> list[list[str]]:
    """Per CPU (one vCPU each): its accesses, the row conflicts its line fills
    met on rows others opened, and whose lines its fills evicted."""
    return [[str(c["index"]), c["vm"] or "-", str(c["accesses"]), str(c.get("el2_accesses", 0)), str(c["llc_misses"]), str(c["l1d_misses"]),
             str(c["dram_accesses"]),
             str(sum(n for who, n in c.get("row_conflicts_by", {}).items() if who != c["vm"])),
             ", ".join(f"{k}: {v}" for k, v in c["evicted"].items()) or "-"]
            for c in report.cpus if c["accesses"]]


def _grid(body: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in body) for i in range(len(body[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=False)).rstrip() for r in body) + "\n"


def timing_rows(report: Report) -> list[list[str]]:
    """Per VM: its modelled time (phase if marked) and its CPUs' instructions,
    stalls and queueing waits (ns)."""
    timing = report.raw.get("timing")
    if timing is None:
        return []
    by_cpu = {int(c["index"]): c for c in timing["cpus"]}
    out = []
    for o in report.owners:
        if o.kind != "vm":
            continue
        mine = [by_cpu[int(c["index"])] for c in report.cpus if c["vm"] == o.name and int(c["index"]) in by_cpu]
        phase = o.phase is not None
        t = model_time_ns(report, o.name)
        pre = "phase_" if phase else ""
        out.append([o.name, "phase" if phase else "run", "-" if t is None else f"{t:,.0f}",
                    str(sum(int(c[f"{pre}insns"]) for c in mine)),
                    f"{sum(int(c[f'{pre}stall_ps']) for c in mine) / 1000:,.0f}",
                    f"{sum(int(c[f'{pre}queue_ps']) for c in mine) / 1000:,.0f}",
                    str(sum(int(c[f"{pre}dram_lines"]) for c in mine))])
    return out


TIMING_COLUMNS = ("VM", "SCOPE", "MODELLED NS", "INSNS", "STALL NS", "QUEUE NS", "DRAM LINES")


def table(report: Report, period_us: int, system: System | None = None, baseline: Report | None = None) -> str:
    """The report as text tables; with ``system``, a line per regulated VM
    naming the unit that bounded it and its modelled DRAM bytes per period;
    with ``baseline`` (another run's report), each VM's modelled slowdown."""
    text = _grid([list(COLUMNS), *rows(report, period_us)]) + "\n" + _grid([list(CPU_COLUMNS), *cpu_rows(report)])
    timed = timing_rows(report)
    if timed:
        text += "\n" + _grid([list(TIMING_COLUMNS), *timed]) + f"(timing model: every figure {MODELLED})\n"
    if system is not None:
        for o in report.owners:
            reg = regulation(report, system, o.name) if o.kind == "vm" else None
            if reg is not None:
                text += f"regulated: {reg['bound']}\n"
    for name, value in slowdowns(report, baseline).items():
        text += f"modelled slowdown of {name}: {value:.3f} (against the baseline run; {MODELLED})\n"
    return f"{text}(DRAM B/PERIOD: per {period_us} us of virtual time. {CAVEAT})\n"


def period_of(system: System) -> int:
    """The period DRAM bytes are reported per: the shortest bandwidth
    regulation period of the config, else 1 ms."""
    periods = [vm.spec.bandwidth.period_us for vm in system.vms if vm.spec.bandwidth is not None]
    return min(periods, default=1000)


def slowdowns(report: Report, baseline: Report | None) -> dict[str, float]:
    """Each VM's modelled slowdown against ``baseline`` (the VMs both runs
    timed; nothing without a baseline)."""
    out: dict[str, float] = {}
    if baseline is None:
        return out
    names = {o.name for o in baseline.owners if o.kind == "vm"}
    for o in report.owners:
        if o.kind == "vm" and o.name in names:
            value = slowdown(report, baseline, o.name)
            if value is not None:
                out[o.name] = value
    return out


def document(report: Report, system: System, baseline: Report | None = None) -> dict[str, Any]:
    """The report with derived figures, for ``--json`` and experiments."""
    period = period_of(system)
    doc = dict(report.raw)
    doc["caveat"] = CAVEAT
    doc["period_us"] = period
    slow = slowdowns(report, baseline)
    doc["derived"] = {
        o.name: {"model_time_ns": model_time_ns(report, o.name), "model_slowdown": slow.get(o.name),
                 "regulation": regulation(report, system, o.name) if o.kind == "vm" else None,
                 "evicted_by_others": o.measured.evicted_by_others(o.name),
                 "evicted_by_hypervisor": o.measured.evicted_by.get(HYPERVISOR, 0),
                 "row_conflicts_by_others": o.measured.conflicts_by_others(o.name),
                 "dram_bytes_per_period": bytes_per_period(o, period),
                 "scope": "phase" if o.phase is not None else "run"}
        for o in report.owners
    }
    return doc


# --- experiments (bulkhead experiment --model) ------------------------------

# Columns the model adds to results.csv, for the VM under test (measured
# phase if it marked one): (column, meaning).
MODEL_COLUMNS: dict[str, str] = {
    "model_llc_accesses": "LLC accesses",
    "model_llc_misses": "LLC misses",
    "model_evicted_by_vms": "its lines evicted by other VMs",
    "model_evicted_by_hyp": "its lines evicted by the hypervisor",
    "model_row_conflicts_by_vms": "DRAM row conflicts caused by other VMs",
    "model_dram_bpp": "its DRAM bytes per period",
    "model_interf_dram_bpp": "the other VMs' DRAM bytes per period",
    # the timing model (docs/model.md "Timing model"): every figure modelled
    "model_time_ns": "its modelled time in ns (marked phase) (modelled)",
    "model_slowdown": "its modelled time over the baseline scenario's (modelled)",
    "model_dram_bytes_per_period": "its DRAM bytes per regulation period, mean (modelled)",
    "model_interf_dram_bytes_per_period": "the regulated other VMs' DRAM bytes per regulation period, mean (modelled)",
    "model_interf_dram_mbps": "the same in MB/s at the regulation period (modelled)",
    "model_interf_budget_per_period": "the regulated other VMs' budgets per period, in the unit that bounded them",
}


def metrics(report: Report, vm: str, period_us: int, system: System | None = None) -> dict[str, float]:
    """The MODEL_COLUMNS of VM ``vm`` (bytes per ``period_us`` of virtual time;
    with ``system``, the regulation periods' figures; model_slowdown needs
    the baseline run: the experiment adds it)."""
    me = report.owner(vm)
    c = me.measured
    vms = {o.name for o in report.owners if o.kind == "vm" and o.name != vm}
    out = {
        "model_llc_accesses": float(c.llc_accesses),
        "model_llc_misses": float(c.llc_misses),
        "model_evicted_by_vms": float(sum(n for who, n in c.evicted_by.items() if who in vms)),
        "model_evicted_by_hyp": float(c.evicted_by.get(HYPERVISOR, 0)),
        "model_row_conflicts_by_vms": float(sum(n for who, n in c.row_conflicts_by.items() if who in vms)),
    }
    bpp = bytes_per_period(me, period_us)
    if bpp is not None:
        out["model_dram_bpp"] = bpp
    others = [bytes_per_period(report.owner(name), period_us) for name in sorted(vms)]
    if any(b is not None for b in others):
        out["model_interf_dram_bpp"] = sum(b for b in others if b is not None)
    t = model_time_ns(report, vm)
    if t is not None:
        out["model_time_ns"] = t
    if system is not None:
        mine = regulation(report, system, vm)
        if mine is not None:
            out["model_dram_bytes_per_period"] = mine["dram_bytes_per_period_mean"]
        regs = [r for r in (regulation(report, system, name) for name in sorted(vms)) if r is not None]
        if regs:
            out["model_interf_dram_bytes_per_period"] = sum(r["dram_bytes_per_period_mean"] for r in regs)
            out["model_interf_dram_mbps"] = sum(r["dram_mbps_mean"] for r in regs)
            out["model_interf_budget_per_period"] = float(sum(r["budget_per_period"] for r in regs))
    return out
