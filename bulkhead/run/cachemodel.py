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

from bulkhead.base.errors import BuildError, ConfigError, Diagnostic
from bulkhead.config.color import Colors
from bulkhead.config.model import PAGE, CacheModelSpec, Platform
from bulkhead.layout.placement import System

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "build" / "cachemodel" / "libcachemodel.so"
API = ROOT / "build" / "qemu-plugin-api"  # QEMU's qemu-plugin.h, fetched by scripts/setup.sh
SOURCES = ROOT / "tools" / "cachemodel"
MAP_NAME = "cachemodel.map"
REPORT_NAME = "cachemodel.json"
HYPERVISOR = "hypervisor"
CAVEAT = ("QEMU models no caches or DRAM: these are the plugin's model (docs/model.md) fed with QEMU's "
          "accesses; who-evicts-whom is exact for the model, miss rates depend on QEMU's vCPU "
          "interleaving under -icount and are never comparable with hardware.")
PERCPU_SYMBOL = "cpu_data"  # struct cpu cpu_data[ARCH_MAX_CPUS] (hypervisor/arch/aarch64/cpu.c)
CPU_H = ROOT / "hypervisor" / "arch" / "aarch64" / "cpu.h"
NM = "aarch64-linux-gnu-nm"
MAX_OWNERS = 31  # CM_MAX_OWNERS - 1 (tools/cachemodel/model.h; owner 0 is "nobody")
MARKER_IMM = 0x5B  # hint #0x5b, x0 = phase id (0: end), x1 = virtual time in ns (guests/lib/include/bench.h)


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


def map_text(system: System, elf: Path | None = None) -> str:
    """The plugin's input file (tools/cachemodel/mapfile.h); ``elf``: the
    hypervisor image, for the per-CPU data address."""
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


def qemu_args(system: System, out: Path, elf: Path | None = None) -> tuple[list[str], Path]:
    """QEMU arguments loading the plugin for ``system`` (input written into
    ``out``; ``elf``: the hypervisor image), and where its report will be."""
    plugin = plugin_path()
    out.mkdir(parents=True, exist_ok=True)
    mapfile = out / MAP_NAME
    mapfile.write_text(map_text(system, elf))
    report = out / REPORT_NAME
    report.unlink(missing_ok=True)
    return ["-plugin", f"{plugin},map={mapfile},out={report}"], report


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


def table(report: Report, period_us: int) -> str:
    text = _grid([list(COLUMNS), *rows(report, period_us)]) + "\n" + _grid([list(CPU_COLUMNS), *cpu_rows(report)])
    return f"{text}(DRAM B/PERIOD: per {period_us} us of virtual time. {CAVEAT})\n"


def period_of(system: System) -> int:
    """The period DRAM bytes are reported per: the shortest bandwidth
    regulation period of the config, else 1 ms."""
    periods = [vm.spec.bandwidth.period_us for vm in system.vms if vm.spec.bandwidth is not None]
    return min(periods, default=1000)


def document(report: Report, system: System) -> dict[str, Any]:
    """The report with derived figures, for ``--json`` and experiments."""
    period = period_of(system)
    doc = dict(report.raw)
    doc["caveat"] = CAVEAT
    doc["period_us"] = period
    doc["derived"] = {
        o.name: {"evicted_by_others": o.measured.evicted_by_others(o.name),
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
}


def metrics(report: Report, vm: str, period_us: int) -> dict[str, float]:
    """The MODEL_COLUMNS of VM ``vm`` (bytes per ``period_us`` of virtual time)."""
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
    return out
