# SPDX-License-Identifier: Apache-2.0
"""Which runs are artefacts rather than results.

A run can end clean and still measure nothing: it ended inside its first
regulation period (the regulator never acted), its interferer never ran, it
was timed in host time, or its value lies outside what the configuration
makes physically possible. Such runs keep their rows in ``results.csv``
(column ``flags``) and are listed in the report, but no chart draws them as a
result (docs/experiments.md "Artefacts").

- :func:`run_flags` looks at one run and its generated config;
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
# Guests that load memory beside the VM under test, and print "bytes=" in their result lines.
INTERFERERS = ("interferer", "dmaint")
CODES = (SHORT, IDLE_INTERFERER, HOST_TIME, IMPLAUSIBLE, ABOVE_BUDGET)


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
    if spec.icount is None:
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
    return flags


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
