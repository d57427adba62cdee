# SPDX-License-Identifier: Apache-2.0
"""Published against Bulkhead, value by value (issue #37, item 6).

For every published value a spec's plots carry (``published:``), one row:
the figure, the published value, Bulkhead's value at the same point (the
same scenario and benchmark in a slowdown chart, the same swept value in an
overhead chart: the mean slowdown over the successful, unflagged runs, as the
chart draws it) and the verdict:

- **matched**: ``|ours / published - 1|`` within the published series'
  ``tolerance`` (default :data:`TOLERANCE`, the issue's +-25%);
- **not matched**: outside it, or inside it without the published effect:
  a slowdown more than :data:`EFFECT` from 1 is matched only by one at least
  half as far from 1 in the same direction (else 1.0 would "match" 1.25);
- **not comparable**, with the reason: the baseline's own point (1 by
  definition on both sides: agreeing there proves nothing), no run at that
  point, every run there failed or was flagged as an artefact, no baseline
  value, or a slowdown beside other VMs under ``-icount`` (QEMU's turns,
  not interference).

Rows of a spec whose runs exchange frames with a host-time peer
(``network: peer``, CLARE) in timing mode are labelled :data:`HOST_PACED`.
The report's section *Published against Bulkhead* is :func:`section`; the
captions' sentence is :func:`caption`; ``agreement.csv`` is :func:`write_csv`.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bulkhead.experiment import validity
from bulkhead.experiment.analysis import Analysis
from bulkhead.experiment.record import OK, RunRecord
from bulkhead.experiment.results import number
from bulkhead.experiment.spec import PlotSpec, Published

TOLERANCE = 0.25
# A slowdown's published effect larger than this (|value - 1|) must show in
# Bulkhead's value too: in its direction and at least half its size. Without
# it, +-25% of a ratio near 1 lets "no effect" match a published +25%.
EFFECT = 0.05
MATCHED, NOT_MATCHED, NOT_COMPARABLE = "matched", "not matched", "not comparable"
HOST_PACED = ("Host-time paced: the frame peer and QEMU's network device run in host time while the guests run "
              "on modelled time, so round trips and frame rates depend on how fast the host ran the model, not "
              "only on the model.")
COLUMNS = ("figure", "source", "at", "benchmark", "published", "bulkhead", "difference", "tolerance", "verdict",
           "why")


@dataclass(frozen=True)
class Row:
    figure: str
    source: str
    at: str  # the point as the paper gives it (a scenario or a swept value)
    benchmark: str
    published: float
    ours: float | None
    tolerance: float
    verdict: str
    why: str = ""  # not comparable: the reason; otherwise a label (host-time paced) or ""

    @property
    def diff(self) -> float | None:
        return None if self.ours is None or not self.published else self.ours / self.published - 1


def _benchmarks(an: Analysis, plot: PlotSpec, pub: Published) -> list[str]:
    if pub.benchmark:
        return [pub.benchmark]
    if plot.kind == "slowdown":
        return list(an.benchmarks)
    return list(an.spec.scenario(plot.scenarios[0]).benchmarks)


def _records(an: Analysis, plot: PlotSpec, at: Any, bench: str) -> list[RunRecord]:
    """The runs behind a published point: its scenario (slowdown charts) or
    the swept value of the plot's scenario (others)."""
    if plot.kind == "slowdown":
        return [r for r in an.records if r.plan.label == str(at) and r.plan.benchmark == bench]
    want = number(str(at))
    return [r for x, recs in an.sweep_points(plot.scenarios[0], plot.x) for r in recs
            if r.plan.benchmark == bench and want is not None and (n := number(str(x))) is not None
            and math.isclose(n, want, rel_tol=1e-9)]


def _value(an: Analysis, plot: PlotSpec, recs: list[RunRecord], bench: str) -> float | None:
    good = [r for r in recs if r.status == OK and not r.flags]
    if plot.kind != "consumed":
        s = an.slowdown(good, bench)
        return s.mean if s else None
    vals = [r.metrics[plot.y] for r in good if plot.y in r.metrics]
    if not vals:
        return None
    base = 1.0
    if plot.relative_to:
        ref = [r.metrics[plot.y] for r in an.ok(scenario=plot.relative_to, bench=bench) if plot.y in r.metrics]
        if not ref or not sum(ref):
            return None
        base = sum(ref) / len(ref)
    return sum(vals) / len(vals) / base


def _why_none(an: Analysis, recs: list[RunRecord]) -> str:
    if not recs:
        return "not run: no run at this point in this result set"
    if not any(r.status == OK for r in recs):
        return "every run here failed: " + ", ".join(sorted({r.status for r in recs}))
    flagged = [r for r in recs if r.status == OK and r.flags]
    if flagged and len(flagged) == sum(r.status == OK for r in recs):
        codes = sorted({validity.code(f) for r in flagged for f in r.flags})
        return "every successful run here is flagged as an artefact (" + ", ".join(codes) + ")"
    return f"no value of the baseline scenario '{an.spec.baseline}' to divide by"


def _verdict(an: Analysis, plot: PlotSpec, at: Any, published: float, bench: str,
             tolerance: float | None) -> tuple[str, str, float | None]:
    """(verdict, why it is not comparable or "", Bulkhead's value) of one published point."""
    recs = _records(an, plot, at, bench)
    ours = _value(an, plot, recs, bench)
    if plot.kind == "slowdown" and str(at) == an.spec.baseline:
        return NOT_COMPARABLE, "the baseline's own point: 1 by definition on both sides", ours
    if ours is None:
        return NOT_COMPARABLE, _why_none(an, recs), None
    if plot.kind != "consumed" and an.turns_note([r for r in recs if r.status == OK and not r.flags], []):
        return NOT_COMPARABLE, (f"beside other VMs under -icount ({validity.QEMU_TURNS}, not interference); "
                                "run it with --timing"), ours
    tol = TOLERANCE if tolerance is None else tolerance
    if not published or abs(ours / published - 1) > tol:
        return NOT_MATCHED, "", ours
    if plot.kind != "consumed" and abs(published - 1) > EFFECT and not (
            (ours - 1) * (published - 1) > 0 and abs(ours - 1) >= abs(published - 1) / 2):
        return NOT_MATCHED, (f"within ±{tol:.0%} of the value, but the published effect ({published - 1:+.1%}) is "
                             f"not there ({ours - 1:+.1%}: not half of it in its direction)"), ours
    return MATCHED, "", ours


def rows(an: Analysis, plot: PlotSpec, figure: str) -> list[Row]:
    """One row per published value of ``plot`` and benchmark it stands beside."""
    out = []
    paced = HOST_PACED.split(":")[0] if an.spec.network == "peer" and an.spec.timing_ns is not None else ""
    for pub in plot.published:
        for at, published in pub.points:
            for bench in _benchmarks(an, plot, pub):
                verdict, why, ours = _verdict(an, plot, at, published, bench, pub.tolerance)
                out.append(Row(figure, pub.label, str(at), bench, published, ours,
                               TOLERANCE if pub.tolerance is None else pub.tolerance, verdict, why or paced))
    return out


def _g(v: float | None) -> str:
    return "–" if v is None else f"{v:,.4g}"


def _diff(r: Row) -> str:
    return "–" if r.diff is None else f"{r.diff:+.1%}"


def caption(an: Analysis, plot: PlotSpec) -> str:
    """The caption's sentence: per published value, its verdict in numbers."""
    parts = []
    for r in rows(an, plot, ""):
        head = f"{r.source} at {r.at}" + (f" ({r.benchmark})" if plot.kind == "slowdown" or r.benchmark else "")
        text = f"{head}: published {_g(r.published)}, Bulkhead {_g(r.ours)}"
        if r.verdict == NOT_COMPARABLE:
            text += f": not comparable ({r.why})"
        else:
            text += f" ({_diff(r)}): {r.verdict} within ±{r.tolerance:.0%}"
        parts.append(text)
    return ("Published against Bulkhead: " + "; ".join(parts) + ".") if parts else ""


def all_rows(an: Analysis, plots: Sequence[tuple[PlotSpec, int]]) -> list[Row]:
    return [r for plot, n in plots for r in rows(an, plot, f"Figure {n}: {plot.name or plot.title}")]


def section(an: Analysis, plots: Sequence[tuple[PlotSpec, int]]) -> list[str]:
    """The report's per-figure table, with a count of each verdict, and the
    figures that carry no published value."""
    table = all_rows(an, plots)
    bare = [f"Figure {n} (`{plot.name or plot.title}`)" for plot, n in plots if not plot.published]
    none = ("Figures without a published value (nothing to match: see each caption's 'Comparable'): "
            + ", ".join(bare) + ".\n") if bare else ""
    if not table:
        return ["## Published against Bulkhead\n", none] if none else []
    counts = {v: sum(r.verdict == v for r in table) for v in (MATCHED, NOT_MATCHED, NOT_COMPARABLE)}
    md = ["## Published against Bulkhead\n",
          f"Every published value the spec's figures carry, beside Bulkhead's at the same point, in "
          f"{validity.time_base(an.spec)}: matched when within the published series' tolerance (default "
          f"±{TOLERANCE:.0%}). {', '.join(f'{n} {v}' for v, n in counts.items())}; also in `agreement.csv`.\n"]
    if an.spec.network == "peer" and an.spec.timing_ns is not None:
        md.append(HOST_PACED + "\n")
    head = ("figure", "published series", "at", "benchmark", "published", "Bulkhead", "difference", "tolerance",
            "verdict")
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in table:
        verdict = f"**{r.verdict}**" + (f": {r.why}" if r.why else "")
        cells = (r.figure, r.source, r.at, r.benchmark, _g(r.published), _g(r.ours), _diff(r),
                 f"±{r.tolerance:.0%}", verdict)
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    md.append("\n".join(lines) + "\n")
    return md + ([none] if none else [])


def write_csv(path: Path, an: Analysis, plots: Sequence[tuple[PlotSpec, int]]) -> None:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        for r in all_rows(an, plots):
            w.writerow((r.figure, r.source, r.at, r.benchmark, f"{r.published:g}",
                        "" if r.ours is None else f"{r.ours:.6g}", "" if r.diff is None else f"{r.diff:.6g}",
                        f"{r.tolerance:g}", r.verdict, r.why))
