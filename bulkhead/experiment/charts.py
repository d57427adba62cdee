# SPDX-License-Identifier: Apache-2.0
"""The charts of an experiment (PNG and SVG, matplotlib) and their captions.

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

import json
import math
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bulkhead.config.model import Platform
from bulkhead.experiment import agreement, overlay, stats, validity
from bulkhead.experiment.analysis import Analysis, platform_of, run_sizes
from bulkhead.experiment.axes import METRIC_TEXT, event_meaning, x_label, y_label
from bulkhead.experiment.axes import line_label as _line_label
from bulkhead.experiment.record import OK, RunRecord
from bulkhead.experiment.results import number
from bulkhead.experiment.spec import ExperimentSpec, PlotSpec
from bulkhead.experiment.stats import stat as _stat

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
                f"1 = no slowdown; mean over the successful unflagged repetitions ({run_sizes(an)}), {CI_BARS}.")
    elif plot.kind == "consumed":
        what = f"{y_label(spec, plot)[0].upper()}{y_label(spec, plot)[1:]} against the {x_label(spec, plot)}"
        what += f"; mean over the successful unflagged repetitions ({run_sizes(an)})."
        if plot.assigned is not None:
            what += (f" Dashed: the budget, y = {plot.assigned:g} x" +
                     (f"^{plot.assigned_power:g}" if plot.assigned_power != 1 else "") + ".")
    else:
        what = (f"Slowdown of VM {spec.critical} relative to scenario '{spec.baseline}' against the "
                f"{x_label(spec, plot)}; 1 = no overhead; mean over the successful unflagged repetitions "
                f"({run_sizes(an)}), {CI_BARS}.")
    if plot.lines:
        what += " Horizontal lines: " + "; ".join(f"{ln.label} ({ln.y:g})" for ln in plot.lines) + "."
    text = f"Figure {number_}: {plot.title}. {what}"
    if drawn is not None:
        text += " " + drawn.summary()
    text += f" {event_meaning(platform, platform_name)} "
    if spec.timing_ns is None:
        text += (f"Measured on QEMU (TCG) in {validity.time_base(spec)}; QEMU models no caches, DRAM or memory "
                 "bus, so interference and bandwidth figures are not physical: read relative, virtual-time "
                 "trends only.")
    else:
        text += (f"Measured on QEMU (TCG) in {validity.time_base(spec)}: the cache/DRAM model's estimate, "
                 "calibrated on few published figures, not a measurement of hardware.")
    if spec.network == "peer" and spec.timing_ns is not None:
        text += " " + agreement.HOST_PACED
    if plot.reproduces:
        text += f" Mirrors: {plot.reproduces.rstrip('.')}."
    if plot.comparable:
        text += f" Comparable: {plot.comparable.rstrip('.')}."
    if plot.published:
        text += " Published values (open black-edged markers, never joined: points, not curves): " + "; ".join(
            f"{pub.label} ({pub.source})" for pub in plot.published) + "."
        if drawn is not None:
            text += " " + agreement.caption(an, plot)
    return text.rstrip()



CI_BARS = "error bars the 95% confidence interval (Student's t; none where N = 1)"


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


def pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "bulkhead"  # reproducible SVG ids
    matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text: searchable, editable in a paper
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig: Any, plots_dir: Path, stem: str) -> list[Path]:
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


def leave_out_flagged(an: Analysis, dr: Drawn, recs: Sequence[RunRecord]) -> None:
    for r in recs:
        if r.status == OK and r.flags:
            dr.leave_out(r)


def chart_slowdown(an: Analysis, plot: PlotSpec, ax: Any, dr: Drawn) -> None:
    labels = [lab for lab in an.labels
              if not plot.scenarios or any(lab == s or lab.startswith(s + "[") for s in plot.scenarios)]
    leave_out_flagged(an, dr, [r for r in an.records if r.plan.label in labels])
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
            name = f"scenario {lab}" + an.turns_note([r for r in an.records if r.plan.index in runs], dr.facts)
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
        leave_out_flagged(an, dr, [r for r in recs if not _violated(r)])
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
    slack and its tolerance are flagged, so that no chart draws them. Not
    in timing mode for traffic relative to the unregulated VM's: the budget
    is a share of modelled cycles, and a throttled VM that queues less for
    DRAM moves more per cycle than the unregulated one did (a real effect
    of the model, not an overrun; docs/model.md "Timing mode")."""
    if plot.kind != "consumed" or (plot.assigned is None and not any(ln.kind == "budget" for ln in plot.lines)):
        return
    if plot.relative_to and an.spec.timing_ns is not None:
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
        leave_out_flagged(an, dr, recs)
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
            label += an.turns_note([r for r in recs_all if r.plan.benchmark == b and r.plan.index in runs], dr.facts)
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


def limits(ax: Any, plot: PlotSpec, dr: Drawn) -> None:
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


def legend(ax: Any) -> None:
    handles, labels = ax.get_legend_handles_labels()
    if handles:  # outside the axes, on the right: it never covers data
        ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
                  fontsize="small", frameon=False)


def figure(an: Analysis, plot: PlotSpec, number_: int) -> tuple[Any, str, Drawn]:
    """One chart as a matplotlib figure, with its caption under the axes;
    returns (figure, caption, what was drawn)."""
    plt = pyplot()
    platform, platform_name = platform_of(an)
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    dr = Drawn(plot.kind)
    {"slowdown": chart_slowdown, "consumed": chart_consumed, "overhead": chart_overhead}[plot.kind](
        an, plot, ax, dr)
    for ln in plot.lines:
        color, style = dr.ref_style()
        ax.axhline(ln.y, color=color, linestyle=style, linewidth=1.2, label=ln.label)
        dr.add_line(ln.label, [], [ln.y])
    limits(ax, plot, dr)
    legend(ax)
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
    plt = pyplot()
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
        paths = save_figure(fig, plots_dir, stem)
        side = plots_dir / f"{stem}.json"
        side.write_text(json.dumps({"figure": number_, "title": plot.title, "caption": text, **dr.document()},
                                   indent=1) + "\n")
        done.append((plot, stem, [*paths, side], text))
        plt.close(fig)
    return done


