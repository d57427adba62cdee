# SPDX-License-Identifier: Apache-2.0
"""Plots (PNG and SVG, matplotlib) and the Markdown report of an experiment.

Charts:

- ``slowdown``: per benchmark, each scenario's primary metric relative to
  the baseline scenario (time-like metrics: value / baseline; rates:
  baseline / value), mean over repetitions with 95% confidence intervals;
- ``consumed``: a metric column (e.g. the regulated VM's MB/s) against a
  swept value (budget), optionally per vCPU and with the assigned line;
- ``overhead``: the slowdown against a swept value (period).

Every chart is drawn for a paper: axes say what they measure and in which
unit (a swept key ``vms.interf.bandwidth.period_us`` becomes "regulation
period of VM interf (µs)"), x is linear unless the plot asks for ``logx``,
legends name the VM and benchmark a line belongs to, and a numbered caption
(in the figure and beside it in report.md) says what is plotted, what one
regulation event is on the platform, that QEMU models no caches or DRAM,
and which published figure the plot reproduces (``reproduces:``).
"""

from __future__ import annotations

import datetime
import json
import math
import re
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bulkhead.base.errors import BuildError, ConfigError
from bulkhead.config.model import Platform
from bulkhead.experiment import modelled, overlay, stats, validity
from bulkhead.experiment.axes import METRIC_TEXT, event_meaning, x_label, y_label
from bulkhead.experiment.axes import line_label as _line_label
from bulkhead.experiment.record import OK, STATUSES, Environment, RunRecord
from bulkhead.experiment.results import number
from bulkhead.experiment.spec import ExperimentSpec, PlotSpec
from bulkhead.experiment.stats import Stat
from bulkhead.experiment.stats import stat as _stat
from bulkhead.layout.load import load_platform, load_system
from bulkhead.run import cachemodel

DISCLAIMER = (
    "> **Not physical: these figures come from QEMU.** QEMU (TCG) models no caches, no DRAM and no\n"
    "> memory bus, so cache and bandwidth interference between VMs cannot be measured on it: a slowdown\n"
    "> (or its absence) beside an interfering VM says nothing about real hardware. What is meaningful\n"
    "> under QEMU is relative and in virtual time (`-icount`, where time is a function of instructions\n"
    "> executed): how throttling follows the budget, the overhead of regulation versus its period, and\n"
    "> interrupt latency. Run the same spec on a board (its platform file) for physical figures.\n"
)


def _pm(s: Stat) -> str:
    return "" if s.ci is None else f" ± {_fmt(s.ci)}"


def _fmt(v: float | None) -> str:
    if v is None:
        return "–"
    if abs(v) >= 1000 or float(v).is_integer():
        return f"{v:,.0f}"
    return f"{v:.3g}" if abs(v) < 1 else f"{v:.2f}"


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
                flag = validity.slowdown_flag(slowdown, spec.max_slowdown) or validity.turns_flag(
                    slowdown, r.guest, self._qemu(r.platform), self._config(r), spec.critical)
                if flag:
                    r.flags.append(flag)

    def turns_note(self, recs: Sequence[RunRecord], dr: Drawn) -> str:
        """A legend's note for a slowdown of runs timed under -icount beside VMs
        the baseline does not run: QEMU's turns, not interference (runs without
        -icount, e.g. the timing mode's, are not labelled)."""
        base = next((self._config(r) for r in self.records if r.plan.label == self.spec.baseline and r.config), {})
        if not any(r.icount is not None and validity.cross_vm(self._config(r), base, self.spec.critical)
                   for r in recs):
            return ""
        fact = (f"Series marked '{validity.QEMU_TURNS}' ran beside VMs the baseline does not run, under -icount: "
                "QEMU runs every vCPU in turn on one thread, so their slowdown is the others' turns, not interference.")
        if fact not in dr.facts:
            dr.facts.append(fact)
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


# --- captions ------------------------------------------------------------------


def caption(an: Analysis, plot: PlotSpec, number_: int, platform: Platform | None, platform_name: str,
            drawn: Drawn | None = None) -> str:
    """Figure caption: what is plotted, what the data show (generated from
    them, never asserted), the event, the QEMU caveat, the published figure
    it mirrors and what is comparable."""
    spec = an.spec
    if plot.kind == "slowdown":
        what = (f"Bars: per benchmark run by VM {spec.critical}, each scenario's primary metric divided by its "
                f"value in scenario '{spec.baseline}' (times: value / baseline; rates: baseline / value); "
                f"1 = no slowdown; mean over the successful unflagged repetitions ({_n(an)}), {CI_BARS}.")
    elif plot.kind == "consumed":
        what = f"{y_label(spec, plot)[0].upper()}{y_label(spec, plot)[1:]} against the {x_label(spec, plot)}"
        what += f"; mean over the successful unflagged repetitions ({_n(an)})."
        if plot.assigned is not None:
            what += (f" Dashed: the budget, y = {plot.assigned:g} x" +
                     (f"^{plot.assigned_power:g}" if plot.assigned_power != 1 else "") + ".")
    else:
        what = (f"Slowdown of VM {spec.critical} relative to scenario '{spec.baseline}' against the "
                f"{x_label(spec, plot)}; 1 = no overhead; mean over the successful unflagged repetitions "
                f"({_n(an)}), {CI_BARS}.")
    if plot.lines:
        what += " Horizontal lines: " + "; ".join(f"{ln.label} ({ln.y:g})" for ln in plot.lines) + "."
    timebase = (f"virtual time (-icount shift={spec.icount})" if spec.icount is not None
                else "host time (no -icount: not reproducible)")
    text = f"Figure {number_}: {plot.title}. {what}"
    if drawn is not None:
        text += " " + drawn.summary()
    text += (f" {event_meaning(platform, platform_name)} "
             f"Measured on QEMU (TCG) in {timebase}; QEMU models no caches, DRAM or memory bus, so "
             "interference and bandwidth figures are not physical: read relative, virtual-time trends only.")
    if plot.reproduces:
        text += f" Mirrors: {plot.reproduces.rstrip('.')}."
    if plot.comparable:
        text += f" Comparable: {plot.comparable.rstrip('.')}."
    if plot.published:
        text += " Published values (open black-edged markers, never joined: points, not curves): " + "; ".join(
            f"{pub.label} ({pub.source})" for pub in plot.published) + "."
        if drawn is not None:
            text += " " + overlay.comparison(drawn)
    return text.rstrip()


CI_BARS = "error bars the 95% confidence interval (Student's t; none where N = 1)"


def _n(an: Analysis) -> str:
    return stats.sizes([an.ok(lab, b) for lab in an.labels for b in an.benchmarks])


def _platform(an: Analysis) -> tuple[Platform | None, str]:
    name = next((r.platform for r in an.records if r.platform), an.spec.platform or "")
    if not name:
        return None, "the platform"
    try:
        return load_platform(name), name
    except (ConfigError, OSError):
        return None, name


# --- charts -----------------------------------------------------------------

# (colour, marker) pairs: no two series of a chart share a pair (nor, within
# the first ten, a colour or a marker); bars use hatches in the marker's place.
COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
          "#bcbd22", "#17becf")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
HATCHES = ("", "//", "\\\\", "xx", "..", "oo", "++", "--", "||", "**")
REF_COLORS = ("0.15", "0.45", "#8b0000", "#00008b")
REF_STYLES = ("--", ":", "-.", (0, (5, 1)))
LOG_SPAN = 50.0  # values spanning this ratio or more get a logarithmic axis
VIOLATION = "#e41a1c"  # runs above their budget: shown, never as a result


class Drawn:
    """What a chart drew: series with their style, values and the runs behind
    them, reference lines, runs left out as artefacts. Written next to the
    chart as ``plots/<stem>.json`` so that tests (and readers) can check it."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.series: list[dict[str, Any]] = []
        self.lines: list[dict[str, Any]] = []
        self.left_out: list[dict[str, Any]] = []
        self._n = 0
        self._nref = 0
        self.xscale = "linear"
        self.yscale = "linear"
        self.xlim: tuple[float, float] | None = None
        self.ylim: tuple[float, float] | None = None
        self.legend_outside = True
        self.facts: list[str] = []  # sentences about the data, for the caption

    def style(self) -> tuple[str, str, str]:
        i = self._n
        self._n += 1
        return COLORS[i % 10], MARKERS[(i + i // 10) % 10], HATCHES[(i + i // 10) % 10]

    def ref_style(self) -> tuple[str, Any]:
        i = self._nref
        self._nref += 1
        return REF_COLORS[i % len(REF_COLORS)], REF_STYLES[(i + i // len(REF_COLORS)) % len(REF_STYLES)]

    def add(self, role: str, label: str, color: str, marker: str, xs: Sequence[float], ys: Sequence[float],
            runs: Sequence[int] = ()) -> None:
        self.series.append({"role": role, "label": label, "color": color, "marker": marker,
                            "x": [float(x) for x in xs], "y": [float(y) for y in ys],
                            "runs": sorted(set(runs))})

    def add_line(self, label: str, xs: Sequence[float], ys: Sequence[float]) -> None:
        self.lines.append({"label": label, "x": [float(x) for x in xs], "y": [float(y) for y in ys]})

    def leave_out(self, rec: RunRecord) -> None:
        if all(d["run"] != rec.plan.index for d in self.left_out):
            self.left_out.append({"run": rec.plan.index, "label": rec.plan.label, "benchmark": rec.plan.benchmark,
                                  "flags": list(rec.flags)})

    def values(self) -> list[float]:
        return [y for s in self.series for y in s["y"]]

    def summary(self) -> str:
        text = " ".join(self.facts)
        if self.left_out:
            codes = sorted({validity.code(f) for d in self.left_out for f in d["flags"]})
            text += (f" {len(self.left_out)} run(s) flagged as artefacts ({', '.join(codes)}) are not drawn "
                     "(report: 'Artefacts').")
        return text.strip()

    def document(self) -> dict[str, Any]:
        return {"kind": self.kind, "series": self.series, "lines": self.lines, "left_out": self.left_out,
                "xscale": self.xscale, "yscale": self.yscale, "xlim": self.xlim, "ylim": self.ylim,
                "legend_outside": self.legend_outside}


def drawn_problems(doc: dict[str, Any], flagged: set[int]) -> list[str]:
    """What is wrong with a chart, from its side JSON (``plots/<stem>.json``):
    a value outside the axes, a repeated colour/marker pair, a flagged run
    (``flagged``: run numbers) drawn as a result, a legend inside the axes."""
    problems = []
    shown = [s for s in doc["series"] if s["role"] in ("measured", "published", "modelled")]
    pairs = [(s["color"], s["marker"]) for s in shown]
    if len(pairs) != len(set(pairs)):
        problems.append(f"a colour/marker pair repeats: {pairs}")
    for axis, key in (("y", "ylim"), ("x", "xlim")):
        if doc.get(key) is None:
            continue
        lo, hi = doc[key]
        for s in doc["series"]:
            out = [v for v in s[axis] if not lo <= v <= hi]
            if out:
                problems.append(f"{s['label']}: {axis} values {out} outside the axis {lo:g}..{hi:g}")
        if axis == "y":
            for line in doc["lines"]:
                if any(not lo <= v <= hi for v in line["y"]):
                    problems.append(f"line {line['label']} outside the y axis")
    drawn_runs = {run for s in doc["series"] if s["role"] != "violation" for run in s["runs"]}
    if drawn_runs & flagged:
        problems.append(f"flagged runs drawn as results: {sorted(drawn_runs & flagged)}")
    if drawn_runs & {d["run"] for d in doc["left_out"]}:
        problems.append("runs both left out and drawn")
    if not doc.get("legend_outside"):
        problems.append("the legend is inside the axes")
    return problems


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "bulkhead"  # reproducible SVG ids
    matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text: searchable, editable in a paper
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, plots_dir: Path, stem: str) -> list[Path]:
    paths = []
    for ext in ("png", "svg"):
        path = plots_dir / f"{stem}.{ext}"
        fig.savefig(path, dpi=110, bbox_inches="tight", metadata={"Date": None} if ext == "svg" else None)
        paths.append(path)
    return paths


def _xs(values: Sequence[Any]) -> tuple[list[float], list[str] | None]:
    """Numeric x positions, or positions plus tick labels for non-numbers."""
    nums = [number(str(v)) for v in values]
    if all(n is not None for n in nums):
        return [float(n) for n in nums if n is not None], None
    return [float(i) for i in range(len(values))], [str(v) for v in values]


def _no_data(ax: Any, what: str) -> None:
    ax.text(0.5, 0.5, f"no successful runs\n({what})", ha="center", va="center", transform=ax.transAxes,
            color="0.4")


def _span(vals: Sequence[float]) -> float:
    pos = [v for v in vals if v > 0]
    return max(pos) / min(pos) if pos and len(pos) == len(vals) else 0.0


def _leave_out_flagged(an: Analysis, dr: Drawn, recs: Sequence[RunRecord]) -> None:
    for r in recs:
        if r.status == OK and r.flags:
            dr.leave_out(r)


def chart_slowdown(an: Analysis, plot: PlotSpec, ax: Any, dr: Drawn) -> None:
    labels = [lab for lab in an.labels
              if not plot.scenarios or any(lab == s or lab.startswith(s + "[") for s in plot.scenarios)]
    _leave_out_flagged(an, dr, [r for r in an.records if r.plan.label in labels])
    benches = [b for b in an.benchmarks if any(an.slowdown(an.ok(lab, b), b) for lab in labels)] or an.benchmarks
    # every scenario keeps its slot (published values stand there even where ours were left out)
    labels = [lab for lab in labels if any(r.status == OK and r.plan.label == lab for r in an.records)]
    width = 0.8 / max(len(labels), 1)
    pos: dict[tuple[str, str], float] = {}
    for i, lab in enumerate(labels):
        xs, ys, lo, hi, runs = [], [], [], [], []
        for j, b in enumerate(benches):
            recs = an.ok(lab, b)
            s = an.slowdown(recs, b)
            x = j - 0.4 + width * (i + 0.5)
            pos[(lab, b)] = x
            if s is None:
                continue
            xs.append(x)
            ys.append(s.mean)
            lo.append(stats.bars(s)[0])
            hi.append(stats.bars(s)[1])
            runs += [r.plan.index for r in recs]
        if xs:
            color, _, hatch = dr.style()
            name = f"scenario {lab}" + an.turns_note([r for r in an.records if r.plan.index in runs], dr)
            ax.bar(xs, ys, width=width, label=name, yerr=[lo, hi], capsize=2, color=color,
                   hatch=hatch, edgecolor="0.2", linewidth=0.5)
            dr.add("measured", name, color, hatch or "solid", xs, ys, runs)
            dr.series[-1]["qemu_scheduling"] = validity.QEMU_TURNS in name
            dr.add("error", f"scenario {lab} 95% CI top", color, hatch or "solid", xs,
                   [y + h for y, h in zip(ys, hi, strict=True)], [])
            dr.facts.append(f"{lab}: {_range(ys)}.")
    for pub in plot.published:
        named = [(f"{scen} ({b})", value, pos.get((str(scen), b))) for scen, value in pub.points
                 for b in (benches if not pub.benchmark else [pub.benchmark])]
        pts = [(at, value, text) for text, value, at in named if at is not None]
        overlay.draw_points(ax, dr, pub.label, [p[0] for p in pts], [p[1] for p in pts], [p[2] for p in pts],
                            unplaced=[(text, value) for text, value, at in named if at is None])
    ax.axhline(1.0, color="0.3", linewidth=0.8, linestyle="--")
    dr.add_line("no slowdown", [], [1.0])
    ax.set_xticks(range(len(benches)))
    ax.set_xticklabels(benches)
    ax.set_xlabel(f"benchmark run by VM {an.spec.critical}")
    ax.set_ylabel(y_label(an.spec, plot))
    if not dr.series:
        _no_data(ax, "or no baseline")


def _range(ys: Sequence[float]) -> str:
    lo, hi = min(ys), max(ys)
    return f"{lo:.3g}" if math.isclose(lo, hi, rel_tol=5e-3) else f"{lo:.3g} to {hi:.3g}"


def _relative_base(an: Analysis, plot: PlotSpec, bench: str) -> float | None:
    s = _stat([r.metrics[plot.y] for r in an.ok(scenario=plot.relative_to, bench=bench) if plot.y in r.metrics])
    return s.mean if s else None


def _bound(plot: PlotSpec, x: float) -> float | None:
    if plot.assigned is not None:
        if x <= 0 and plot.assigned_power < 0:
            return None
        return float(plot.assigned * x ** plot.assigned_power)
    budgets = [ln.y for ln in plot.lines if ln.kind == "budget"]
    return min(budgets, default=None) if plot.kind == "consumed" else None


def _slack(an: Analysis, rec: RunRecord) -> float:
    """One regulation period as a fraction of the run (the most a budget can be overrun by)."""
    periods = validity.regulated_periods(_config_of(an, rec))
    span = rec.metrics.get("bench_ns")
    if not periods or not span:
        return 1.0
    return max(periods.values()) * 1000 / span


def _config_of(an: Analysis, rec: RunRecord) -> dict[str, Any]:
    path = Path(rec.config)
    if not path.is_absolute() and an.out is not None:
        path = an.out / path
    return validity._config(path) if rec.config and path.is_file() else {}


def _violated(r: RunRecord) -> bool:
    return r.status == OK and bool(r.flags) and all(validity.code(f) == validity.ABOVE_BUDGET for f in r.flags)


def _draw_violations(an: Analysis, plot: PlotSpec, ax: Any, dr: Drawn, xs: Sequence[float],
                     points: Sequence[tuple[Any, list[RunRecord]]]) -> None:
    """Runs above the budget are shown, not removed: red crosses, no line."""
    vx, vy, runs = [], [], []
    for x, (_, recs) in zip(xs, points, strict=True):
        for r in filter(_violated, recs):
            base = _relative_base(an, plot, r.plan.benchmark) if plot.relative_to else 1.0
            values = _vcpu_values(an, plot, r) if plot.per_cpu else [r.metrics[plot.y]] if plot.y in r.metrics else []
            for v in values:
                if base:
                    vx.append(x)
                    vy.append(v / base)
                    runs.append(r.plan.index)
    if vx:
        label = "budget violated (flagged above-budget: not a result)"
        ax.scatter(vx, vy, marker="X", s=70, color=VIOLATION, zorder=6, label=label)
        dr.add("violation", label, VIOLATION, "X", vx, vy, runs)
        dr.facts.append(f"Red crosses: {len(set(runs))} run(s) above the budget ({_range(vy)}), drawn as violations "
                        "and listed in 'Artefacts'.")


def chart_consumed(an: Analysis, plot: PlotSpec, ax: Any, dr: Drawn) -> None:
    scen = plot.scenarios[0]
    points = an.sweep_points(scen, plot.x)
    xs, ticks = _xs([p[0] for p in points])
    for _, recs in points:
        _leave_out_flagged(an, dr, [r for r in recs if not _violated(r)])
    if ticks is None:
        _draw_violations(an, plot, ax, dr, xs, points)
    for b in an.spec.scenario(scen).benchmarks:
        base = _relative_base(an, plot, b) if plot.relative_to else 1.0
        if not base:
            continue
        if plot.per_cpu:
            guest = an.spec.benchmark(b).guest
            key = "mbps" if plot.y == "mbps_per_cpu" else plot.y  # a result line is one vCPU
            cpus: dict[str, list[tuple[float, float, int]]] = {}
            for x, (_, recs) in zip(xs, points, strict=True):
                per: dict[str, list[tuple[float, int]]] = {}
                for r in recs:
                    if r.status != OK or r.flags or r.plan.benchmark != b:
                        continue
                    for vm, fields in r.lines:
                        v = number(fields.get(key))
                        if vm == an.spec.critical and fields.get("bench") == guest and v is not None:
                            per.setdefault(fields.get("cpu", "0"), []).append((v / base, r.plan.index))
                for cpu, vals in per.items():
                    mean = sum(v for v, _ in vals) / len(vals)
                    cpus.setdefault(cpu, []).extend((x, mean, run) for _, run in vals)
            for cpu, pts in sorted(cpus.items()):
                px = sorted({p[0] for p in pts})
                py = [next(p[1] for p in pts if p[0] == x) for x in px]
                color, marker, _ = dr.style()
                label = _line_label(an.spec, plot, b, cpu)
                ax.plot(px, py, marker=marker, color=color, label=label)
                dr.add("measured", label, color, marker, px, py, [p[2] for p in pts])
                dr.series[-1]["benchmark"] = b
        else:
            px, py, runs = [], [], []
            for x, (_, recs) in zip(xs, points, strict=True):
                good = [r for r in recs if r.status == OK and not r.flags and r.plan.benchmark == b
                        and plot.y in r.metrics]
                s = _stat([r.metrics[plot.y] / base for r in good])
                if s is not None:
                    px.append(x)
                    py.append(s.mean)
                    runs += [r.plan.index for r in good]
            if px:
                color, marker, _ = dr.style()
                label = _line_label(an.spec, plot, b)
                ax.plot(px, py, marker=marker, color=color, label=label)
                dr.add("measured", label, color, marker, px, py, runs)
                dr.series[-1]["benchmark"] = b
                dr.facts.append(f"Measured ({b}): {_range(py)}.")
    if plot.assigned is not None and ticks is None and xs:
        lo, hi = min(xs), max(xs)
        logx = plot.logx or (lo > 0 and hi / lo >= LOG_SPAN)
        grid = [lo + (hi - lo) * i / 50 for i in range(51)] if not logx or lo <= 0 else \
            [lo * (hi / lo) ** (i / 50) for i in range(51)]
        grid = [g for g in grid if _bound(plot, g) is not None]
        ys = [_bound(plot, g) or 0.0 for g in grid]
        color, style = dr.ref_style()
        label = plot.assigned_label or "budget, y = " + f"{plot.assigned:g} x" + (
            f"^{plot.assigned_power:g}" if plot.assigned_power != 1 else "")
        ax.plot(grid, ys, linestyle=style, color=color, label=label)
        dr.add_line(label, grid, ys)
    _published_xy(plot, ax, dr)
    _axes(ax, an.spec, plot, ticks, xs, dr)
    ax.set_ylabel(y_label(an.spec, plot))
    if not any(s["role"] == "measured" for s in dr.series):
        _no_data(ax, scen)


def _vcpu_values(an: Analysis, plot: PlotSpec, rec: RunRecord) -> list[float]:
    """The VM under test's per-vCPU values of the plot's column (its result lines)."""
    key = "mbps" if plot.y == "mbps_per_cpu" else plot.y
    guest = an.spec.benchmark(rec.plan.benchmark).guest
    return [v for vm, f in rec.lines if vm == an.spec.critical and f.get("bench") == guest
            and (v := number(f.get(key))) is not None]


def flag_above_budget(an: Analysis, plot: PlotSpec) -> None:
    """Before any chart is drawn: a consumed chart's runs whose value (each
    vCPU's, for per_cpu) lies above the plot's budget by more than one period's
    slack and its tolerance are flagged, so that no chart draws them."""
    if plot.kind != "consumed" or (plot.assigned is None and not any(ln.kind == "budget" for ln in plot.lines)):
        return
    points = an.sweep_points(plot.scenarios[0], plot.x)
    xs, ticks = _xs([p[0] for p in points])
    if ticks is not None:
        return
    what = METRIC_TEXT.get(plot.y, plot.y).format(vm=an.spec.critical)
    for x, (_, recs) in zip(xs, points, strict=True):
        bound = _bound(plot, x)
        if bound is None:
            continue
        for r in recs:
            if r.status != OK or r.flags:
                continue
            base = _relative_base(an, plot, r.plan.benchmark) if plot.relative_to else 1.0
            if not base:
                continue
            values = _vcpu_values(an, plot, r) if plot.per_cpu else [r.metrics[plot.y]] if plot.y in r.metrics \
                else []
            for v in values:
                flag = validity.above_bound_flag(v / base, bound, _slack(an, r) + plot.tolerance, what)
                if flag:
                    r.flags.append(flag)
                    break


def _published_xy(plot: PlotSpec, ax: Any, dr: Drawn) -> None:
    for pub in plot.published:
        pts = [(float(n), v, _num(x)) for x, v in pub.points if (n := number(str(x))) is not None]
        if pts:
            overlay.draw_points(ax, dr, pub.label, [p[0] for p in pts], [p[1] for p in pts], [p[2] for p in pts],
                                pub.benchmark or "")


def chart_overhead(an: Analysis, plot: PlotSpec, ax: Any, dr: Drawn) -> None:
    scen = plot.scenarios[0]
    points = an.sweep_points(scen, plot.x)
    xs, ticks = _xs([p[0] for p in points])
    for _, recs in points:
        _leave_out_flagged(an, dr, recs)
    recs_all = [r for _, recs in points for r in recs]
    for b in an.spec.scenario(scen).benchmarks:
        px, py, lo, hi, runs = [], [], [], [], []
        for x, (_, recs) in zip(xs, points, strict=True):
            good = [r for r in recs if r.status == OK and not r.flags and r.plan.benchmark == b]
            s = an.slowdown(good, b)
            if s is not None:
                px.append(x)
                py.append(s.mean)
                lo.append(stats.bars(s)[0])
                hi.append(stats.bars(s)[1])
                runs += [r.plan.index for r in good]
        if px:
            color, marker, _ = dr.style()
            label = _line_label(an.spec, plot, b)
            label += an.turns_note([r for r in recs_all if r.plan.benchmark == b and r.plan.index in runs], dr)
            ax.errorbar(px, py, yerr=[lo, hi], marker=marker, color=color, capsize=3, label=label)
            dr.add("measured", label, color, marker, px, py, runs)
            dr.series[-1].update(benchmark=b, qemu_scheduling=validity.QEMU_TURNS in label)
            dr.add("error", label + " 95% CI top", color, marker, px, [y + h for y, h in zip(py, hi, strict=True)])
            dr.add("error", label + " 95% CI bottom", color, marker, px, [y - h for y, h in zip(py, lo, strict=True)])
            dr.facts.append(f"Measured ({b}): slowdown {py[0]:.3g} at {_num(points[xs.index(px[0])][0])} "
                            f"to {py[-1]:.3g} at {_num(points[xs.index(px[-1])][0])}"
                            f" (range {_range(py)}).")
    ax.axhline(1.0, color="0.3", linewidth=0.8, linestyle="--")
    dr.add_line("no slowdown", [], [1.0])
    _published_xy(plot, ax, dr)
    _axes(ax, an.spec, plot, ticks, xs, dr)
    ax.set_ylabel(y_label(an.spec, plot))
    if not any(s["role"] == "measured" for s in dr.series):
        _no_data(ax, f"{scen} or no baseline")


def _num(v: Any) -> str:
    return f"{plot_x_text(v)}"


def plot_x_text(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def _axes(ax: Any, spec: ExperimentSpec, plot: PlotSpec, ticks: list[str] | None, xs: Sequence[float],
          dr: Drawn) -> None:
    ax.set_xlabel(x_label(spec, plot))
    if ticks is not None:
        ax.set_xticks(xs)
        ax.set_xticklabels(ticks)
    elif xs and min(xs) > 0 and (plot.logx or max(xs) / min(xs) >= LOG_SPAN):
        ax.set_xscale("log")
        dr.xscale = "log"
    ax.grid(True, alpha=0.3)


def _limits(ax: Any, plot: PlotSpec, dr: Drawn) -> None:
    """y axis: every drawn value (and reference line) inside it; log when the
    values span decades (or when the plot asks)."""
    vals = [v for v in dr.values() if math.isfinite(v)]
    refs = [y for ln in dr.lines for y in ln["y"] if math.isfinite(y)]
    every = vals + refs
    if not every:
        return
    log = plot.logy if plot.logy is not None else (_span(every) >= LOG_SPAN)
    if log and all(v > 0 for v in every):
        ax.set_yscale("log")
        dr.yscale = "log"
        lo, hi = min(every) / 1.6, max(every) * 1.6
    else:
        lo, hi = min(every + [0.0]), max(every)
        pad = (hi - lo) * 0.08 or abs(hi) * 0.1 or 1.0
        lo, hi = (lo - pad if lo < 0 else 0.0), hi + pad
    ax.set_ylim(lo, hi)
    dr.ylim = (float(lo), float(hi))
    xl = ax.get_xlim()
    dr.xlim = (float(xl[0]), float(xl[1]))


def _legend(ax: Any) -> None:
    handles, labels = ax.get_legend_handles_labels()
    if handles:  # outside the axes, on the right: it never covers data
        ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
                  fontsize="small", frameon=False)


def figure(an: Analysis, plot: PlotSpec, number_: int) -> tuple[Any, str, Drawn]:
    """One chart as a matplotlib figure, with its caption under the axes;
    returns (figure, caption, what was drawn)."""
    plt = _pyplot()
    platform, platform_name = _platform(an)
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    dr = Drawn(plot.kind)
    {"slowdown": chart_slowdown, "consumed": chart_consumed, "overhead": chart_overhead}[plot.kind](
        an, plot, ax, dr)
    for ln in plot.lines:
        color, style = dr.ref_style()
        ax.axhline(ln.y, color=color, linestyle=style, linewidth=1.2, label=ln.label)
        dr.add_line(ln.label, [], [ln.y])
    _limits(ax, plot, dr)
    _legend(ax)
    # long axis texts on two lines: a one-line y label taller than the axes runs into the title and caption
    ax.set_ylabel("\n".join(textwrap.wrap(ax.get_ylabel(), 55, break_on_hyphens=False)))
    ax.set_title("\n".join(textwrap.wrap(f"{plot.title} (QEMU: not physical)", 90, break_on_hyphens=False)),
                 fontsize="medium")
    text = caption(an, plot, number_, platform, platform_name, dr)
    lines = textwrap.wrap(text, 120, break_on_hyphens=False, break_long_words=False)
    # under the x label (figure coordinates: the axes' own would overlap it);
    # savefig's tight bounding box grows to take it in
    fig.text(0.02, -0.01, "\n".join(lines), ha="left", va="top", fontsize="x-small", gid="caption")
    return fig, text, dr


def plot_stem(plot: PlotSpec) -> str:
    if plot.name:
        return plot.name
    stem = plot.kind if not plot.scenarios or plot.kind == "slowdown" else f"{plot.kind}-{plot.scenarios[0]}"
    if plot.x and plot.kind != "slowdown":
        stem += f"-{plot.x}"
    return stem


def draw(an: Analysis, plots_dir: Path) -> list[tuple[PlotSpec, str, list[Path], str]]:
    """Every chart of the spec: (plot, stem, [png, svg, json], caption)."""
    plt = _pyplot()
    plots_dir.mkdir(parents=True, exist_ok=True)
    done: list[tuple[PlotSpec, str, list[Path], str]] = []
    used: set[str] = set()
    for plot in an.spec.plots:  # first, so that every chart leaves the same runs out
        flag_above_budget(an, plot)
    for number_, plot in enumerate(an.spec.plots, 1):
        base = stem = plot_stem(plot)
        n = 2
        while stem in used:
            stem, n = f"{base}-{n}", n + 1
        used.add(stem)
        fig, text, dr = figure(an, plot, number_)
        paths = _save(fig, plots_dir, stem)
        side = plots_dir / f"{stem}.json"
        side.write_text(json.dumps({"figure": number_, "title": plot.title, "caption": text, **dr.document()},
                                   indent=1) + "\n")
        done.append((plot, stem, [*paths, side], text))
        plt.close(fig)
    return done


# --- report -----------------------------------------------------------------


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(out) + "\n"


def _model_chart(labels: list[str], values: dict[str, list[float]], plots_dir: Path) -> list[Path]:
    """Bars per scenario: interference the model saw, and DRAM bytes per period."""
    plt = _pyplot()
    plots_dir.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2))
    for ax, keys, ylabel in (
        (axes[0], ("model_evicted_by_vms", "model_row_conflicts_by_vms"), "count"),
        (axes[1], ("model_dram_bpp", "model_interf_dram_bpp"), "DRAM bytes per period"),
    ):
        width = 0.8 / len(keys)
        for i, key in enumerate(keys):
            xs = [j - 0.4 + width * (i + 0.5) for j in range(len(labels))]
            ax.bar(xs, values[key], width=width, label=cachemodel.MODEL_COLUMNS[key])
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, rotation=20, fontsize="small")
        ax.set_ylabel(ylabel)
        ax.legend(fontsize="small")
    fig.suptitle("Cache model: interference seen by the VM under test (QEMU plugin model: not physical)",
                 fontsize="medium")
    paths = _save(fig, plots_dir, "model")
    plt.close(fig)
    return paths


def _model_section(an: Analysis, records: Sequence[RunRecord], plots_dir: Path) -> tuple[list[str], list[Path]]:
    """``experiment --model``: the cache model's columns for the VM under test."""
    columns = [k for k in cachemodel.MODEL_COLUMNS if any(k in r.metrics for r in records)]
    if not columns:
        return [], []
    rows = []
    labels: list[str] = []
    values: dict[str, list[float]] = {k: [] for k in cachemodel.MODEL_COLUMNS}
    for lab in an.labels:
        for b in an.benchmarks:
            ok = an.ok(lab, b)
            if not ok:
                continue
            cells = {k: _stat([r.metrics[k] for r in ok if k in r.metrics]) for k in cachemodel.MODEL_COLUMNS}
            rows.append((lab, b, *(_fmt(c.mean) if (c := cells[k]) else "–" for k in columns)))
            labels.append(lab if len(an.benchmarks) == 1 else f"{lab}/{b}")
            for k, c in cells.items():
                values[k].append(c.mean if c else 0.0)
    files = _model_chart(labels, values, plots_dir) if labels else []
    md = ["## Cache model (QEMU plugin)\n",
          f"{cachemodel.CAVEAT} Columns (`results.csv`), for `{an.spec.critical}` during its marked "
          "phase: " + "; ".join(f"`{k}`: {cachemodel.MODEL_COLUMNS[k]}" for k in columns) + ".\n",
          _table(("scenario", "benchmark", *columns), rows)]
    if files:
        md.append("![Cache model](plots/model.png)\n")
    return md, files


def _modelled_slowdowns(an: Analysis) -> dict[tuple[str, str], Stat]:
    """(label, benchmark): modelled slowdown, as the model gave it or from modelled times."""
    out: dict[tuple[str, str], Stat] = {}
    for lab in an.labels:
        for b in an.benchmarks:
            ok = [modelled.canonical(r.metrics) for r in an.ok(lab, b)]  # flagged runs are no result
            direct = _stat([m[modelled.SLOWDOWN] for m in ok if modelled.SLOWDOWN in m])
            if direct is None:
                base = _stat([m[modelled.TIME] for m in (modelled.canonical(r.metrics)
                              for r in an.ok(an.spec.baseline, b)) if modelled.TIME in m])
                if base and base.mean:
                    direct = _stat([m[modelled.TIME] / base.mean for m in ok if modelled.TIME in m])
            if direct is not None:
                out[(lab, b)] = direct
    return out


def _modelled_section(an: Analysis, plots_dir: Path) -> tuple[list[str], list[Path]]:
    """The timing model's figures (columns ``modelled_*``), labelled modelled."""
    canon = {id(r): modelled.canonical(r.metrics) for r in an.records}
    cols = [c for c in dict.fromkeys(k for m in canon.values() for k in m)]
    if not cols:
        return [], []
    md = ["## Modelled figures (timing model: not measured)\n", modelled.CAVEAT + "\n"]
    rows = []
    for lab in an.labels:
        for b in an.benchmarks:
            ok = [canon[id(r)] for r in an.ok(lab, b)]
            if not ok:
                continue
            cells = [_stat([m[k] for m in ok if k in m]) for k in cols]
            rows.append((lab, b, *(_fmt(c.mean) if c else "–" for c in cells)))
    md.append(_table(("scenario", "benchmark", *(f"{c} (modelled)" for c in cols)), rows))
    sd = _modelled_slowdowns(an)
    files: list[Path] = []
    if sd:
        plt = _pyplot()
        plots_dir.mkdir(parents=True, exist_ok=True)
        fig, ax = plt.subplots(figsize=(7.5, 4.2))
        dr = Drawn("modelled-slowdown")
        _leave_out_flagged(an, dr, an.records)
        labels = [lab for lab in an.labels if any((lab, b) in sd for b in an.benchmarks)]
        width = 0.8 / max(len(labels), 1)
        for i, lab in enumerate(labels):
            xs = [j - 0.4 + width * (i + 0.5) for j, b in enumerate(an.benchmarks) if (lab, b) in sd]
            ys = [sd[(lab, b)].mean for b in an.benchmarks if (lab, b) in sd]
            color, _, hatch = dr.style()
            ax.bar(xs, ys, width=width, color=color, hatch=hatch, edgecolor="0.2", linewidth=0.5,
                   label=f"scenario {lab} (modelled)")
            dr.add("modelled", f"scenario {lab} (modelled)", color, hatch or "solid", xs, ys,
                   [r.plan.index for b in an.benchmarks if (lab, b) in sd for r in an.ok(lab, b)])
        ax.axhline(1.0, color="0.3", linewidth=0.8, linestyle="--")
        dr.add_line("no slowdown", [], [1.0])
        ax.set_xticks(range(len(an.benchmarks)))
        ax.set_xticklabels(an.benchmarks)
        ax.set_ylabel(f"modelled slowdown of VM {an.spec.critical} (ratio)")
        _limits(ax, PlotSpec("slowdown", "", (), "", "", None, False, False), dr)
        _legend(ax)
        ax.set_title("Modelled slowdown (timing model over QEMU: modelled, not measured)", fontsize="medium")
        files = _save(fig, plots_dir, "modelled-slowdown")
        side = plots_dir / "modelled-slowdown.json"
        side.write_text(json.dumps(dr.document(), indent=1) + "\n")
        files.append(side)
        plt.close(fig)
        md.append("![Modelled slowdown](plots/modelled-slowdown.png)\n")
        md.append("*Modelled slowdown of the VM under test relative to its modelled time in "
                  f"'{an.spec.baseline}' (or as the model gave it). {modelled.CAVEAT}*\n")
    return md, files


def _stem_text(label: str) -> str:
    """A scenario label as part of a file name: interf-mbr[budget_events=60000] -> interf-mbr-budget_events-60000."""
    return re.sub(r"-+", "-", re.sub(r"[^A-Za-z0-9_.]+", "-", label)).strip("-")


def regulations(an: Analysis) -> dict[str, list[tuple[RunRecord, dict[str, Any]]]]:
    """``experiment --model``: per scenario label, each successful, unflagged
    run's regulated VMs other than the VM under test, as
    ``cachemodel.regulation`` gives them from the run's kept report
    (``logs/<config>-r<rep>.cachemodel.json``): their modelled DRAM bytes
    per regulation period beside their budget."""
    out: dict[str, list[tuple[RunRecord, dict[str, Any]]]] = {}
    if an.out is None:
        return out
    for rec in an.records:
        if rec.status != OK or rec.flags or not rec.config:
            continue
        path = an.out / "logs" / f"{rec.plan.config_stem}-r{rec.plan.repetition}{cachemodel.RUN_REPORT_SUFFIX}"
        config = Path(rec.config) if Path(rec.config).is_absolute() else an.out / rec.config
        if not path.is_file() or not config.is_file():
            continue
        try:
            report, system = cachemodel.load_report(path), load_system(config)
        except (BuildError, ConfigError, OSError, ValueError, KeyError):
            continue
        for vm in system.vms:
            if vm.name == an.spec.critical:
                continue
            reg = cachemodel.regulation(report, system, vm.name)
            if reg is not None:
                out.setdefault(rec.plan.label, []).append((rec, reg))
    return out


def _regulation_chart(an: Analysis, label: str, runs: Sequence[tuple[RunRecord, dict[str, Any]]],
                      plots_dir: Path, stem: str) -> tuple[list[Path], str, Drawn]:
    """One regulated scenario: each run's interferer's modelled DRAM bytes per
    regulation period (one series per run and VM), its budget as a line."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    dr = Drawn("regulation")
    budgets: dict[tuple[str, float], dict[str, Any]] = {}
    for rec, reg in runs:
        xs = [float(i) for i, _ in reg["series"]]
        ys = [float(b) for _, b in reg["series"]]
        color, marker, _ = dr.style()
        name = (f"{reg['vm']}, {rec.plan.benchmark} run {rec.plan.index}: DRAM bytes per period "
                f"({cachemodel.MODELLED})")
        ax.plot(xs, ys, color=color, marker=marker, markersize=4, linewidth=1.0,
                markevery=max(1, len(xs) // 20), label=name)
        dr.add(cachemodel.MODELLED, name, color, marker, xs, ys, [rec.plan.index])
        budgets.setdefault((reg["vm"], float(reg["budget_bytes_per_period_notional"])), reg)
    units = sorted({reg["unit"] for _, reg in runs})
    for (vm, notional), reg in budgets.items():
        color, style = dr.ref_style()
        unit = str(reg["unit"]).split(" (")[0]
        text = (f"budget of {vm}: {reg['budget_per_period']:,} {unit} per {reg['period_us']} us\n"
                f"(notional: {notional:,.0f} B per period at 1 B per event)")
        ax.axhline(notional, color=color, linestyle=style, linewidth=1.2, label=text)
        dr.add_line(text, [], [notional])
    ax.set_xlabel("regulation period (index since boot; first and last left out)")
    ax.set_ylabel("modelled DRAM bytes per regulation period (modelled)")
    ax.grid(True, alpha=0.3)
    _limits(ax, PlotSpec("consumed", "", (), "", "", None, False, False), dr)
    _legend(ax)
    ax.set_title("\n".join(textwrap.wrap(
        f"{label}: the interferer's modelled DRAM traffic per period against its budget "
        "(timing model over QEMU: modelled, not measured)", 90, break_on_hyphens=False)), fontsize="medium")
    means = "; ".join(f"{reg['vm']} ({rec.plan.benchmark}, run {rec.plan.index}): mean "
                      f"{reg['dram_bytes_per_period_mean']:,.0f} B, max {reg['dram_bytes_per_period_max']:,} B "
                      f"over {reg['periods']} periods" for rec, reg in runs)
    text = (f"Scenario {label}, modelled: the regulated VM's DRAM bytes per regulation period as the cache/DRAM "
            f"model saw them (`cachemodel.regulation`), against its budget. What actually bounded it: "
            f"{', '.join(units)}; the budget drawn in bytes is notional (1 byte per event), so where the two "
            f"differ the budget is not a bound on bytes. {means}. {cachemodel.CAVEAT}")
    fig.text(0.02, -0.01, "\n".join(textwrap.wrap(text, 120, break_on_hyphens=False, break_long_words=False)),
             ha="left", va="top", fontsize="x-small", gid="caption")
    paths = _save(fig, plots_dir, stem)
    side = plots_dir / f"{stem}.json"
    side.write_text(json.dumps({"scenario": label, "caption": text, "label": cachemodel.MODELLED,
                                "bound": [reg["bound"] for _, reg in runs], **dr.document()}, indent=1) + "\n")
    plt.close(fig)
    return [*paths, side], text, dr


def _regulation_section(an: Analysis, plots_dir: Path) -> tuple[list[str], list[Path]]:
    """``experiment --model``: per regulated scenario, the interferer's
    modelled DRAM traffic per period against its budget ("regulated to X"
    shown, not assumed)."""
    regs = regulations(an)
    if not regs:
        return [], []
    plots_dir.mkdir(parents=True, exist_ok=True)
    md = ["## Regulated interferers: modelled DRAM traffic against the budget\n",
          "Per regulated scenario, each regulated VM's modelled DRAM bytes per regulation period (the "
          "cache/DRAM model's per-period series, kept per run in `logs/*" + cachemodel.RUN_REPORT_SUFFIX
          + "`), against its budget. On QEMU the regulator counts CPU cycles (instructions under "
          "`-icount` shift 0), not memory events: the column 'bounded by' names what bounded it, and a "
          "budget in bytes is notional there. Modelled, not measured.\n"]
    rows = []
    files: list[Path] = []
    used: set[str] = set()
    for label in an.labels:
        if label not in regs:
            continue
        for rec, reg in regs[label]:
            rows.append((label, rec.plan.benchmark, str(rec.plan.index), reg["vm"], reg["unit"],
                         f"{reg['budget_per_period']:,} per {reg['period_us']} us",
                         f"{reg['budget_bytes_per_period_notional']:,.0f}",
                         f"{reg['dram_bytes_per_period_mean']:,.0f}", f"{reg['dram_bytes_per_period_max']:,}",
                         str(reg["periods"])))
        stem = base = f"regulation-{_stem_text(label)}"
        n = 2
        while stem in used:
            stem, n = f"{base}-{n}", n + 1
        used.add(stem)
        paths, text, _ = _regulation_chart(an, label, regs[label], plots_dir, stem)
        files += paths
        md.append(f"![{label}: modelled DRAM bytes per period against the budget](plots/{stem}.png)\n")
        md.append(f"*{text}* [SVG](plots/{stem}.svg)\n")
    md.insert(2, _table(("scenario", "benchmark", "run", "VM", "bounded by", "budget",
                         "budget, notional B/period", "modelled B/period (mean)", "modelled B/period (max)",
                         "periods"), rows))
    return md, files


def render(spec: ExperimentSpec, out: Path, records: Sequence[RunRecord], env: Environment,
           repetitions: int) -> tuple[Path, list[Path]]:
    """Write ``plots/`` and ``report.md`` into ``out``; returns (report, plot files)."""
    an = Analysis(spec, records, out)
    charts = draw(an, out / "plots")
    files = [p for _, _, paths, _ in charts for p in paths]
    platforms = sorted({r.platform for r in records if r.platform}) or [spec.platform or "(base config)"]
    places: dict[str, int] = {}
    for r in records:
        if r.place:
            places[r.place] = places.get(r.place, 0) + 1

    md: list[str] = [DISCLAIMER, f"# Experiment `{spec.name}`\n"]
    if spec.description:
        md.append(spec.description + "\n")
    md.append("## Setup\n")
    md.append(_table(("", ""), [
        ("spec", f"`{spec.display}`"),
        ("base system", f"`{spec.base_display}`, VM under test `{spec.critical}`"),
        ("platform", ", ".join(platforms)),
        ("runs", f"{len(records)} ({len(spec.scenarios)} scenarios, {len(spec.benchmarks)} benchmarks, "
                 f"{repetitions} repetition(s))"),
        ("time base", f"virtual time, `-icount shift={spec.icount}`" if spec.icount is not None
         else "host time (no `-icount`): not reproducible"),
        ("baseline", f"`{spec.baseline}`"),
        ("tools", f"bulkhead {env.bulkhead_version}, commit {env.git_rev.removesuffix('-dirty')} ("
                  + ("**dirty**: files differ from the commit" if env.git_rev.endswith("-dirty") else "clean")
                  + f"), QEMU {env.qemu_version}; hashes in `bundle.json`"),
        ("host", env.host),
        *([("labgrid places", ", ".join(f"`{p}` ({n} runs)" for p, n in sorted(places.items())))]
          if places else []),
        ("generated", datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")),
    ]))

    md.append("## Results\n")
    md.append("Mean ± the 95% confidence interval (Student's t) over the N successful unflagged repetitions "
              f"(min–max in brackets); slowdown relative to `{spec.baseline}` for the benchmark's primary "
              "metric, likewise. Per row in `summary.csv`.\n")
    rows = []
    for lab in an.labels:
        for b in an.benchmarks:
            recs = [r for r in records if r.plan.label == lab and r.plan.benchmark == b]
            if not recs:
                continue
            st = an.value(lab, b)
            sd = an.slowdown(an.ok(lab, b), b)
            interf = _stat([r.metrics["interf_mbps"] for r in an.ok(lab, b) if "interf_mbps" in r.metrics])
            metric = spec.benchmark(b).metric
            statuses = ", ".join(f"{sum(r.status == s for r in recs)} {s}" for s in STATUSES
                                 if any(r.status == s for r in recs))
            n_flagged = sum(r.status == OK and bool(r.flags) for r in recs)
            if n_flagged:
                statuses += f" ({n_flagged} flagged: not a result)"
            rows.append((
                lab, b, f"{metric.column} ({metric.unit})",
                f"{_fmt(st.mean)}{_pm(st)} [{_fmt(st.lo)}–{_fmt(st.hi)}]" if st else "–", str(st.n if st else 0),
                f"{sd.mean:.3f}" + (f" ± {sd.ci:.3f}" if sd.ci is not None else "") if sd else "–",
                _fmt(interf.mean) if interf else "–",
                statuses,
            ))
    md.append(_table(("scenario", "benchmark", "metric", "value", "N", "slowdown", "interferer MB/s", "runs"),
                     rows))

    model_md, model_files = _model_section(an, records, out / "plots")
    md += model_md
    files += model_files
    modelled_md, modelled_files = _modelled_section(an, out / "plots")
    md += modelled_md
    files += modelled_files
    regulation_md, regulation_files = _regulation_section(an, out / "plots")
    md += regulation_md
    files += regulation_files

    md.append("## Figures\n")
    for number_, (plot, stem, _, text) in enumerate(charts, 1):
        md.append(f"### Figure {number_}: {plot.title}\n")
        md.append(f"![{plot.title}](plots/{stem}.png)\n")
        md.append(f"*{text}* [SVG](plots/{stem}.svg)\n")

    md.append("## What these numbers mean on QEMU\n")
    md.append(
        "- **Interference** (slowdown beside an interferer, with or without coloring): QEMU shares no\n"
        "  cache or memory bandwidth between vCPUs, so these slowdowns are near 1 or artifacts of the\n"
        "  emulator, never contention in a memory system. Under `-icount` every vCPU runs in turn on one\n"
        "  host thread against one virtual clock: when all vCPUs are busy, a benchmark's measured time can\n"
        "  take in other vCPUs' turns, which shows up as large slowdowns that depend on the memory layout\n"
        "  and timing (and may vanish with coloring) without meaning anything about caches.\n"
        "- **Bandwidth regulation**: the budget counts PMU events (on qemu-virt, CPU cycles) per period;\n"
        "  under `-icount` a throttled VM's consumed bandwidth against its budget, and the overhead of\n"
        "  short periods, are deterministic functions of the instructions executed: meaningful as\n"
        "  relative, virtual-time figures.\n"
        "- **Interrupt latency** (`irqlat`) is the instruction count of the injection path in virtual\n"
        "  time: useful to compare configurations, not a hardware latency.\n"
        "- **Absolute MB/s and ns** are those of an emulator and say nothing about a board.\n"
    )

    flagged = an.flagged()
    if flagged:
        md.append("## Artefacts: runs not drawn as results\n")
        md.append("These runs ended clean, but their values are not results: they are kept in `results.csv` "
                  "(column `flags`) and left out of every chart and of the means above.\n")
        md.append(_table(("run", "scenario", "benchmark", "rep", "value", "why"), [
            (str(r.plan.index), r.plan.label, r.plan.benchmark, str(r.plan.repetition), _fmt(r.value),
             " / ".join(" ".join(f.split()) for f in r.flags)[:400]) for r in flagged
        ]))

    bad = [r for r in records if r.status != OK]
    if bad:
        md.append("## Runs that did not succeed\n")
        md.append(_table(("run", "scenario", "benchmark", "rep", "status", "error"), [
            (str(r.plan.index), r.plan.label, r.plan.benchmark, str(r.plan.repetition), r.status,
             " ".join(r.error.split())[:300]) for r in bad
        ]))
        if any(r.status == "unsupported" for r in bad):
            md.append("`unsupported`: the scenario is optional and its configuration is not accepted by this "
                      "version of the toolchain (e.g. a mitigation that has not landed yet).\n")

    md.append("## Files\n")
    md.append("- `results.csv`: one row per run (units: `results-units.csv`); `results-lines.csv`: every result "
              "line (per vCPU); `summary.csv`: means, 95% intervals, N;\n- `bundle.json`, `bundle/`, `configs/`: the "
              "spec, platforms, generated configs and hashes (`--reproduce`); `logs/`: the console of every run;\n"
              "- `plots/`: the charts as PNG and SVG.\n")
    report = out / "report.md"
    report.write_text("\n".join(md))
    return report, files
