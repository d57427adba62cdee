# SPDX-License-Identifier: Apache-2.0
"""Statistics over an experiment's repetitions (docs/experiments.md
"Repetitions and statistics").

A value drawn or tabled as a result is the mean over the successful,
unflagged repetitions with its 95% confidence interval: mean ± t · s / √N,
Student's t with N - 1 degrees of freedom (``t95``: the two-sided 97.5%
quantile, tabled), s the sample standard deviation. With N = 1 there is no
interval. ``summary.csv`` holds one row per scenario × sweep value ×
benchmark: N, mean, s, the interval, min, max, and the slowdown likewise.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bulkhead.experiment.record import OK, RunRecord
from bulkhead.experiment.spec import ExperimentSpec

# t_{0.975, df} for df = 1..30 (two-sided 95%), then df 40, 60, 120 and the normal limit
_T95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
        2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
        2.045, 2.042)
_T95_TAIL = ((30, 2.042), (40, 2.021), (60, 2.000), (120, 1.980), (math.inf, 1.960))


def t95(df: int) -> float:
    """Student's t quantile for a two-sided 95% interval with ``df`` degrees
    of freedom (beyond 30: interpolated in 1/df between tabled values)."""
    if df < 1:
        raise ValueError("a confidence interval needs at least two values")
    if df <= len(_T95):
        return _T95[df - 1]
    for (d0, t0), (d1, t1) in zip(_T95_TAIL, _T95_TAIL[1:], strict=False):
        if df <= d1:
            w = (1 / d0 - 1 / df) / (1 / d0 - (0 if math.isinf(d1) else 1 / d1))
            return t0 + w * (t1 - t0)
    return 1.960


@dataclass(frozen=True)
class Stat:
    mean: float
    lo: float  # smallest value
    hi: float  # largest value
    n: int
    sd: float | None = None  # sample standard deviation (N >= 2)
    ci: float | None = None  # half width of the 95% confidence interval (N >= 2)

    @property
    def ci_lo(self) -> float | None:
        return None if self.ci is None else self.mean - self.ci

    @property
    def ci_hi(self) -> float | None:
        return None if self.ci is None else self.mean + self.ci


def stat(values: Sequence[float | None]) -> Stat | None:
    """Mean, range, standard deviation and 95% interval of the finite values."""
    vals = [v for v in values if v is not None and math.isfinite(v)]
    if not vals:
        return None
    n = len(vals)
    mean = sum(vals) / n
    if n < 2:
        return Stat(mean, min(vals), max(vals), n)
    sd = math.sqrt(sum((v - mean) ** 2 for v in vals) / (n - 1))
    return Stat(mean, min(vals), max(vals), n, sd, t95(n - 1) * sd / math.sqrt(n))


def text(s: Stat, fmt: str = ".4g") -> str:
    """``mean ± ci (N = n)``, or ``mean (N = 1)``."""
    if s.ci is None:
        return f"{s.mean:{fmt}} (N = {s.n})"
    return f"{s.mean:{fmt}} ± {s.ci:{fmt}} (N = {s.n})"


SUMMARY_COLUMNS = ("scenario", "variant", "benchmark", "metric", "unit", "n", "mean", "sd", "ci95_lo", "ci95_hi",
                   "min", "max", "flagged", "failed", "slowdown_mean", "slowdown_ci95_lo", "slowdown_ci95_hi")


def _fmt(v: float | None) -> str:
    return "" if v is None else f"{v:.6g}"


def write_summary(path: Path, spec: ExperimentSpec, records: Sequence[RunRecord]) -> None:
    """``summary.csv``: per scenario × sweep value × benchmark, the
    statistics of its primary metric over the successful unflagged runs
    (``flagged`` and ``failed`` count the runs left out), and of its slowdown
    relative to the baseline scenario's mean."""
    groups: dict[tuple[str, str, str], list[RunRecord]] = {}
    for r in sorted(records, key=lambda r: r.plan.index):
        groups.setdefault((r.plan.scenario, r.plan.variant_text, r.plan.benchmark), []).append(r)
    tmp = path.with_suffix(".csv.tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(SUMMARY_COLUMNS)
        for (scenario, variant, bench), recs in groups.items():
            good = [r for r in recs if r.status == OK and not r.flags]
            s = stat([r.value for r in good])
            metric = spec.benchmark(bench).metric
            base = stat([r.value for r in records if r.status == OK and not r.flags
                         and r.plan.scenario == spec.baseline and r.plan.benchmark == bench])
            slow = None
            if base and base.mean:
                slow = stat([(v / base.mean if metric.lower_is_better else base.mean / v)
                             for v in (r.value for r in good) if v])
            w.writerow([scenario, variant, bench, metric.column, metric.unit, s.n if s else 0,
                        _fmt(s.mean if s else None), _fmt(s.sd if s else None), _fmt(s.ci_lo if s else None),
                        _fmt(s.ci_hi if s else None), _fmt(s.lo if s else None), _fmt(s.hi if s else None),
                        sum(r.status == OK and bool(r.flags) for r in recs), sum(r.status != OK for r in recs),
                        _fmt(slow.mean if slow else None), _fmt(slow.ci_lo if slow else None),
                        _fmt(slow.ci_hi if slow else None)])
    os.replace(tmp, path)


def bars(s: Stat) -> tuple[float, float]:
    """Error bar lengths (below, above the mean): the 95% interval, none for N = 1."""
    return (s.ci, s.ci) if s.ci is not None else (0.0, 0.0)


def sizes(groups: Sequence[Sequence[RunRecord]]) -> str:
    """``N = 3`` or ``N = 2-3``: the successful unflagged runs per drawn value."""
    ns = sorted({sum(r.status == OK and not r.flags for r in g) for g in groups} - {0})
    if not ns:
        return "N = 0"
    return f"N = {ns[0]}" if ns[0] == ns[-1] else f"N = {ns[0]}-{ns[-1]}"
