# SPDX-License-Identifier: Apache-2.0
"""An experiment's records grouped as its tables and charts read them
(:class:`Analysis`): by scenario, benchmark and swept value, flagged runs
(bulkhead.experiment.validity) never part of a value drawn as a result.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bulkhead.base.errors import ConfigError
from bulkhead.config.model import Platform
from bulkhead.experiment import stats, validity
from bulkhead.experiment.record import OK, RunRecord
from bulkhead.experiment.spec import ExperimentSpec
from bulkhead.experiment.stats import Stat
from bulkhead.experiment.stats import stat as _stat
from bulkhead.layout.load import load_platform


class Analysis:
    """Groupings of the records the tables and charts share. Runs flagged as
    artefacts (validity.py) are never part of a value drawn as a result."""

    def __init__(self, spec: ExperimentSpec, records: Sequence[RunRecord], out: Path | None = None) -> None:
        self.spec = spec
        self.out = out
        self._qemu_cache: dict[str, bool] = {}
        self.records = list(records)
        self.labels: list[str] = []  # scenario labels (with sweep values), matrix order
        for r in self.records:
            if r.plan.label not in self.labels:
                self.labels.append(r.plan.label)
        self.benchmarks = [b.name for b in spec.benchmarks]
        for r in self.records:  # run-level flags (again, for CSVs written before they existed)
            if r.status == OK and not r.flags and r.config:
                path = Path(r.config)
                if not path.is_absolute() and out is not None:
                    path = out / path
                r.flags = validity.run_flags(spec, r, path) if path.is_file() else []
        for r in self.records:  # values outside the physical range
            if r.status != OK or r.flags:
                continue
            base = self.baseline(r.plan.benchmark)
            v = r.value
            if base and v:
                lower = self.spec.benchmark(r.plan.benchmark).metric.lower_is_better
                slowdown = v / base if lower else base / v
                # timing mode: the vCPUs run side by side on modelled time, no -icount turns to blame
                turns = spec.timing_ns is None and self._qemu(r.platform)
                flag = validity.slowdown_flag(slowdown, spec.max_slowdown) or validity.turns_flag(
                    slowdown, r.guest, turns, self._config(r), spec.critical)
                if flag:
                    r.flags.append(flag)

    def turns_note(self, recs: Sequence[RunRecord], facts: list[str]) -> str:
        """A legend's note for a slowdown of runs timed under -icount beside VMs
        the baseline does not run: QEMU's turns, not interference (runs without
        -icount, e.g. the timing mode's, are not labelled); the fact behind it
        goes into the chart's ``facts``."""
        base = next((self._config(r) for r in self.records if r.plan.label == self.spec.baseline and r.config), {})
        if not any(r.icount is not None and validity.cross_vm(self._config(r), base, self.spec.critical)
                   for r in recs):
            return ""
        fact = (f"Series marked '{validity.QEMU_TURNS}' ran beside VMs the baseline does not run, under -icount: "
                "QEMU runs every vCPU in turn on one thread, so their slowdown is the others' turns, not interference.")
        if fact not in facts:
            facts.append(fact)
        return f" ({validity.QEMU_TURNS}, not interference)"

    def _config(self, rec: RunRecord) -> dict[str, Any]:
        path = Path(rec.config)
        if not path.is_absolute() and self.out is not None:
            path = self.out / path
        return validity._config(path) if rec.config and path.is_file() else {}

    def _qemu(self, name: str) -> bool:
        """Whether the platform runs under QEMU (where no contention is modelled)."""
        if name not in self._qemu_cache:
            try:
                self._qemu_cache[name] = bool(name) and load_platform(name).qemu is not None
            except (ConfigError, OSError):
                self._qemu_cache[name] = False
        return self._qemu_cache[name]

    def flagged(self) -> list[RunRecord]:
        return [r for r in self.records if r.status == OK and r.flags]

    def ok(self, label: str | None = None, bench: str | None = None,
           scenario: str | None = None) -> list[RunRecord]:
        """Successful runs whose values are results (no artefact flag)."""
        return [r for r in self.records if r.status == OK and not r.flags
                and (label is None or r.plan.label == label)
                and (bench is None or r.plan.benchmark == bench)
                and (scenario is None or r.plan.scenario == scenario)]

    def value(self, label: str, bench: str) -> Stat | None:
        return _stat([v for v in (r.value for r in self.ok(label, bench)) if v is not None])

    def baseline(self, bench: str) -> float | None:
        vals = [r.value for r in self.records if r.status == OK and r.plan.label == self.spec.baseline
                and r.plan.benchmark == bench and r.value is not None
                and not any(validity.code(f) == validity.IMPLAUSIBLE for f in r.flags)]
        s = _stat([v for v in vals if v is not None])
        return s.mean if s else None

    def slowdown(self, records: Sequence[RunRecord], bench: str) -> Stat | None:
        base = self.baseline(bench)
        if not base:
            return None
        lower = self.spec.benchmark(bench).metric.lower_is_better
        vals = []
        for r in records:
            v = r.value
            if v is None or v == 0 or r.flags:
                continue
            vals.append(v / base if lower else base / v)
        return _stat(vals)

    def sweep_points(self, scenario: str, x: str) -> list[tuple[Any, list[RunRecord]]]:
        """(x value, records) of a swept scenario, in sweep order."""
        points: dict[str, tuple[Any, list[RunRecord]]] = {}
        for r in self.records:
            if r.plan.scenario != scenario:
                continue
            xv = dict(r.plan.variant).get(x)
            points.setdefault(repr(xv), (xv, []))[1].append(r)
        return list(points.values())



def run_sizes(an: Analysis) -> str:
    """The runs' sizes (N per scenario and benchmark) for a caption."""
    return stats.sizes([an.ok(lab, b) for lab in an.labels for b in an.benchmarks])


def platform_of(an: Analysis) -> tuple[Platform | None, str]:
    """The experiment's platform (None if it cannot be loaded) and its name."""
    name = next((r.platform for r in an.records if r.platform), an.spec.platform or "")
    if not name:
        return None, "the platform"
    try:
        return load_platform(name), name
    except (ConfigError, OSError):
        return None, name
