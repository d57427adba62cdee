# SPDX-License-Identifier: Apache-2.0
"""Which runs are artefacts rather than results.

A run can end clean and still measure nothing: it ended inside its first
regulation period (the regulator never acted), its interferer never ran, it
was timed in host time, or its value lies outside what the configuration
makes physically possible. Such runs keep their rows in ``results.csv``
(column ``flags``) and are listed in the report, but no chart draws them as a
result (docs/experiments.md "Artefacts").

- :func:`run_flags` looks at one run and its generated config: also whether
  every interferer ran over the whole measured phase (the start/end markers
  of the result lines) and whether a regulated interferer was ever throttled;
- :func:`slowdown_flag` and :func:`above_bound_flag` judge a value against
  the physical range (used by the report, which knows the baselines and
  bounds).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from bulkhead.experiment.record import RunRecord
from bulkhead.experiment.spec import ExperimentSpec

SHORT = "inside-first-period"
IDLE_INTERFERER = "interferer-idle"
HOST_TIME = "host-time"
IMPLAUSIBLE = "implausible-slowdown"
# Guests whose time on QEMU depends only on the instructions they and the
# other vCPUs run (no I/O, no interrupt waits).
CPU_BOUND = ("bandwidth", "latency", "stride")
ABOVE_BUDGET = "above-budget"
NOT_COVERED = "interferer-not-running"
REGULATOR_IDLE = "regulator-idle"
# Not a flag: the label of a slowdown beside other VMs under -icount, where
# QEMU runs the vCPUs in turn on one thread (docs/experiments.md).
QEMU_TURNS = "QEMU -icount scheduling"
# Guests that load memory beside the VM under test, and print "bytes=" in their result lines.
INTERFERERS = ("interferer", "dmaint")
CODES = (SHORT, IDLE_INTERFERER, HOST_TIME, IMPLAUSIBLE, ABOVE_BUDGET, NOT_COVERED, REGULATOR_IDLE)


def time_base(spec: ExperimentSpec) -> str:
    """What the runs' times are: virtual (-icount), modelled (timing mode) or host time."""
    if spec.icount is not None:
        return f"virtual time (-icount shift={spec.icount})"
    if spec.timing_ns is not None:
        return (f"modelled time (timing mode: the cache/DRAM model's lock-step clock, quantum {spec.timing_ns:,} "
                "ns, which the guests' counters read; docs/model.md)")
    return "host time (no -icount: not reproducible)"


def code(flag: str) -> str:
    """The flag's code (its text up to the first colon)."""
    return flag.split(":", 1)[0]


def _config(path: Path) -> dict[str, Any]:
    try:
        doc = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError):
        return {}
    return doc if isinstance(doc, dict) else {}


def regulated_periods(config: dict[str, Any]) -> dict[str, int]:
    """{VM name: its regulation period in us} of the VMs with a bandwidth budget."""
    out: dict[str, int] = {}
    for vm in config.get("vms") or []:
        if isinstance(vm, dict) and isinstance(vm.get("bandwidth"), dict):
            period = vm["bandwidth"].get("period_us")
            if isinstance(period, int) and period > 0:
                out[str(vm.get("name"))] = period
    return out


def run_flags(spec: ExperimentSpec, rec: RunRecord, config_path: Path | str) -> list[str]:
    """Why ``rec`` (a run that ended clean) is not a result; empty if it is one."""
    flags: list[str] = []
    config = _config(Path(config_path)) if config_path else {}
    if spec.icount is None and spec.timing_ns is None:  # timing mode: modelled time, not host time
        flags.append(f"{HOST_TIME}: timed without -icount (host time: noise of the host's load, not "
                     "reproducible)")
    span = rec.metrics.get("bench_ns")
    periods = regulated_periods(config)
    if span is not None and periods:
        vm, period = max(periods.items(), key=lambda kv: kv[1])
        if span < period * 1000:
            flags.append(f"{SHORT}: the benchmark ran {span / 1000:.0f} us, inside the first {period} us "
                         f"regulation period of VM {vm}: the regulator never acted")
    interferers = [(str(vm.get("name")), str(vm.get("guest"))) for vm in config.get("vms") or []
                   if isinstance(vm, dict) and vm.get("guest") in INTERFERERS and vm.get("name") != spec.critical]
    for name, guest in interferers:
        lines = [f for vm, f in rec.lines if vm == name and f.get("bench") == guest]
        moved = sum(float(f.get("bytes", "0") or 0) for f in lines)
        if not lines or moved <= 0:
            flags.append(f"{IDLE_INTERFERER}: VM {name} " + ("printed no result" if not lines else "moved no bytes")
                         + ": its interference never started")
    flags += coverage_flags(spec.critical, rec.guest, rec.lines)
    flags += regulator_flags(spec.critical, config, rec.lines)
    return flags


# A window: (time base, start, end) in ns; end None: still running when the run stopped.
Window = tuple[str, float, float | None]


def window(fields: dict[str, str]) -> Window | None:
    """A result line's measured window: ``start_ns``/``end_ns`` of the bare-metal
    guests (the virtual counter, the same in every VM), or ``begin_s``/``end_s``
    of a Linux workload's ``bulkhead-run`` block (the VM's uptime)."""
    try:
        if "start_ns" in fields and "end_ns" in fields:
            return "counter", float(fields["start_ns"]), float(fields["end_ns"])
        if "begin_s" in fields:
            end = fields.get("end_s")
            return "uptime", float(fields["begin_s"]) * 1e9, float(end) * 1e9 if end else None
    except ValueError:
        return None
    return None


def _span(windows: list[Window]) -> Window:
    ends = [w[2] for w in windows]
    return windows[0][0], min(w[1] for w in windows), None if None in ends else max(e for e in ends if e is not None)


def _secs(ns: float | None) -> str:
    return "the end of the run" if ns is None else f"{ns / 1e9:.6f} s"


def coverage_flags(critical: str, guest: str, lines: list[tuple[str, dict[str, str]]]) -> list[str]:
    """An interferer whose window does not cover the measured phase of the VM
    under test (its first start to its last end) did not interfere with all of
    it: e.g. stress-ng starting after cyclictest finished. Each interfering
    result line group (VM, tool, vCPU or block) is judged on its own; windows
    on different time bases are not compared."""
    own = [(f, w) for vm, f in lines if vm == critical and (w := window(f)) is not None
           and f.get("bench") != "regulator"]
    mine = [w for f, w in own if f.get("bench") == guest] or [w for _, w in own]
    if not mine:
        return []
    groups: dict[tuple[str, str, str], list[Window]] = {}
    for vm, f in lines:
        w = window(f)
        # a start-barrier peer that held (workloads.held) covered the phase by protocol: its uptime
        # is another kernel's clock, off by their early boots
        if vm != critical and w is not None and f.get("bench") != "regulator" and f.get("barrier") != "held":
            key = f.get("cpu", "") if "start_ns" in f else f.get("block", "")
            groups.setdefault((vm, f.get("bench", "?"), key), []).append(w)
    flags = []
    for base in sorted({w[0] for w in mine}):
        _, v0, v1 = _span([w for w in mine if w[0] == base])
        for (vm, bench, key), ws in groups.items():
            same = [w for w in ws if w[0] == base]
            if not same:
                continue
            _, i0, i1 = _span(same)
            late = i0 > v0
            early = i1 is not None and (v1 is None or i1 < v1)  # None: ran until the run stopped
            if late or early:
                who = f"VM {vm} ({bench}" + (f" {'vCPU' if base == 'counter' else 'block'} {key}" if key else "") + ")"
                when = "after it ended" if v1 is not None and i0 >= v1 else "after it began" if late else \
                    "before it ended"
                flags.append(f"{NOT_COVERED}: {who} ran from {_secs(i0)} to {_secs(i1)} ({base} time), not over the "
                             f"measured phase of VM {critical}, {_secs(v0)} to {_secs(v1)}: it "
                             + ("started " if late else "stopped ") + f"{when}, so part of the measurement had no "
                             "interference")
    return flags


def regulator_flags(critical: str, config: dict[str, Any], lines: list[tuple[str, dict[str, str]]]) -> list[str]:
    """A regulated VM other than the VM under test whose regulator never
    throttled it (its ``result bench=regulator`` line: ``throttles=0``) was
    not regulated in this run: a "regulated" scenario that measured no
    regulation. The VM under test's own regulation (overhead scenarios, a
    budget it is meant never to exhaust) is not judged."""
    flags = []
    for vm, period in regulated_periods(config).items():
        if vm == critical:
            continue
        reports = [f for name, f in lines if name == vm and f.get("bench") == "regulator"]
        if not reports:
            continue
        throttles = sum(float(f.get("throttles", "0") or 0) for f in reports)
        if throttles == 0:
            flags.append(f"{REGULATOR_IDLE}: VM {vm} is regulated ({period} us period) but its regulator never "
                         "throttled it (0 throttles, BH_HC_BW_STATS): the run measured no regulation")
    return flags


def cross_vm(config: dict[str, Any], baseline: dict[str, Any], critical: str) -> list[str]:
    """The VMs of ``config`` beside the VM under test that its baseline does
    not have: the source of a cross-VM slowdown."""
    have = {str(vm.get("name")) for vm in baseline.get("vms") or [] if isinstance(vm, dict)}
    return [str(vm.get("name")) for vm in config.get("vms") or [] if isinstance(vm, dict)
            and vm.get("name") != critical and str(vm.get("name")) not in have]


def slowdown_flag(slowdown: float, limit: float) -> str | None:
    """A slowdown outside [1/limit, limit] is not a physical effect of sharing."""
    if slowdown > limit or slowdown < 1 / limit:
        return (f"{IMPLAUSIBLE}: slowdown {slowdown:,.1f} outside the physically possible range "
                f"(1/{limit:g} to {limit:g}): an emulator artefact")
    return None


def turns_flag(slowdown: float, guest: str, on_qemu: bool, config: dict[str, Any], critical: str) -> str | None:
    """On QEMU, which models no contention, a CPU-bound benchmark's slowdown
    can only come from sharing QEMU's one -icount thread with the other
    vCPUs: fair turns bound it by about the number N of vCPUs of the system
    (unless the VM under test is itself regulated). Above 1.5 N it is how
    QEMU scheduled the turns, not an effect of the configuration."""
    if not on_qemu or guest not in CPU_BOUND or not config:
        return None
    vms = [vm for vm in config.get("vms") or [] if isinstance(vm, dict)]
    if any(vm.get("name") == critical and vm.get("bandwidth") for vm in vms):
        return None
    vcpus = sum(len(vm.get("cpus") or []) for vm in vms)
    if vcpus and slowdown > vcpus * 1.5:  # fair turns give at most about N; beyond 1.5 N: unfair turns
        return (f"{IMPLAUSIBLE}: slowdown {slowdown:,.1f} above the {vcpus} vCPUs that share QEMU's one "
                "-icount thread (QEMU models no contention): how QEMU scheduled the turns, an emulator artefact")
    return None


def above_bound_flag(value: float, bound: float, slack: float, what: str) -> str | None:
    """A consumed value above its budget ``bound`` by more than ``slack`` (one
    period's worth, as a fraction of the bound, plus the plot's tolerance)
    cannot have been regulated."""
    if bound > 0 and value > bound * (1 + slack) * 1.0001:
        return (f"{ABOVE_BUDGET}: {what} {value:,.4g} is above its budget {bound:,.4g} by more than one "
                f"period's slack and the plot's tolerance ({slack:.1%}): the budget did not bound it in this unit")
    return None
