# SPDX-License-Identifier: Apache-2.0
"""Plots (PNG and SVG, matplotlib) and the Markdown report of an experiment.

Charts:

- ``slowdown``: per benchmark, each scenario's primary metric relative to
  the baseline scenario (time-like metrics: value / baseline; rates:
  baseline / value), mean over repetitions with min-max bars;
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
import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bulkhead.base.errors import ConfigError
from bulkhead.config.model import Platform
from bulkhead.experiment.record import OK, STATUSES, Environment, RunRecord
from bulkhead.experiment.results import METRIC_COLUMNS, number
from bulkhead.experiment.spec import ExperimentSpec, PlotSpec
from bulkhead.layout.load import load_platform
from bulkhead.run import cachemodel

DISCLAIMER = (
    "> **Not physical: these figures come from QEMU.** QEMU (TCG) models no caches, no DRAM and no\n"
    "> memory bus, so cache and bandwidth interference between VMs cannot be measured on it: a slowdown\n"
    "> (or its absence) beside an interfering VM says nothing about real hardware. What is meaningful\n"
    "> under QEMU is relative and in virtual time (`-icount`, where time is a function of instructions\n"
    "> executed): how throttling follows the budget, the overhead of regulation versus its period, and\n"
    "> interrupt latency. Run the same spec on a board (its platform file) for physical figures.\n"
)


@dataclass(frozen=True)
class Stat:
    mean: float
    lo: float
    hi: float
    n: int


def _stat(values: Sequence[float]) -> Stat | None:
    vals = [v for v in values if v is not None and math.isfinite(v)]
    if not vals:
        return None
    return Stat(sum(vals) / len(vals), min(vals), max(vals), len(vals))


def _fmt(v: float | None) -> str:
    if v is None:
        return "–"
    if abs(v) >= 1000 or float(v).is_integer():
        return f"{v:,.0f}"
    return f"{v:.3g}" if abs(v) < 1 else f"{v:.2f}"


class Analysis:
    """Groupings of the records the tables and charts share."""

    def __init__(self, spec: ExperimentSpec, records: Sequence[RunRecord]) -> None:
        self.spec = spec
        self.records = list(records)
        self.labels: list[str] = []  # scenario labels (with sweep values), matrix order
        for r in self.records:
            if r.plan.label not in self.labels:
                self.labels.append(r.plan.label)
        self.benchmarks = [b.name for b in spec.benchmarks]

    def ok(self, label: str | None = None, bench: str | None = None,
           scenario: str | None = None) -> list[RunRecord]:
        return [r for r in self.records if r.status == OK
                and (label is None or r.plan.label == label)
                and (bench is None or r.plan.benchmark == bench)
                and (scenario is None or r.plan.scenario == scenario)]

    def value(self, label: str, bench: str) -> Stat | None:
        return _stat([v for v in (r.value for r in self.ok(label, bench)) if v is not None])

    def baseline(self, bench: str) -> float | None:
        s = self.value(self.spec.baseline, bench)
        return s.mean if s else None

    def slowdown(self, records: Sequence[RunRecord], bench: str) -> Stat | None:
        base = self.baseline(bench)
        if not base:
            return None
        lower = self.spec.benchmark(bench).metric.lower_is_better
        vals = []
        for r in records:
            v = r.value
            if v is None or v == 0:
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


# --- axis texts, legends and captions ---------------------------------------

# A swept key's last component: (what it is, unit); {vm} is the VM the key is under.
SWEEP_AXES: dict[str, tuple[str, str]] = {
    "budget_events": ("bandwidth budget of VM {vm}", "events per period"),
    "write_budget_events": ("write-bandwidth budget of VM {vm}", "events per period"),
    "budget_mbps": ("bandwidth budget of VM {vm}", "MB/s"),
    "write_budget_mbps": ("write-bandwidth budget of VM {vm}", "MB/s"),
    "period_us": ("regulation period of VM {vm}", "µs"),
    "size": ("buffer size of VM {vm}", "bytes"),
    "footprint": ("memory footprint of VM {vm}", "bytes"),
}

# What a metric column measures; {vm} is the VM under test.
METRIC_TEXT: dict[str, str] = {
    "mbps": "bandwidth of VM {vm}",
    "mbps_per_cpu": "bandwidth per vCPU of VM {vm}",
    "ns_per_line": "time per cache line of VM {vm}",
    "ns_per_access": "time per dependent access of VM {vm}",
    "min_mbps": "lowest bandwidth over the stride sweep of VM {vm}",
    "max_mbps": "highest bandwidth over the stride sweep of VM {vm}",
    "slowest_step": "slowest stride of VM {vm}",
    "min_ns": "minimum interrupt latency in VM {vm}",
    "mean_ns": "mean interrupt latency in VM {vm}",
    "p50_ns": "median interrupt latency in VM {vm}",
    "p99_ns": "99th-percentile interrupt latency in VM {vm}",
    "max_ns": "maximum interrupt latency in VM {vm}",
    "cpus": "vCPUs of VM {vm}",
    "interf_mbps": "total bandwidth of the interfering VMs",
    "interf_cpus": "vCPUs of the interfering VMs",
}


def _with_unit(text: str, unit: str) -> str:
    return f"{text} ({unit})" if unit else text


def x_label(spec: ExperimentSpec, plot: PlotSpec) -> str:
    """The swept value, in words and with its unit."""
    key = next((sw.key for sc in spec.scenarios if sc.name in plot.scenarios
                for sw in sc.sweeps if sw.label == plot.x), plot.x)
    parts = key.split(".")
    vm = parts[1] if len(parts) > 2 and parts[0] == "vms" else ""
    known = SWEEP_AXES.get(parts[-1])
    if known is None or (not vm and "{vm}" in known[0]):
        return f"{plot.x} (swept: {key})" if key != plot.x else plot.x
    return _with_unit(known[0].format(vm=vm), known[1])


def y_label(spec: ExperimentSpec, plot: PlotSpec) -> str:
    if plot.kind != "consumed":
        return f"slowdown of VM {spec.critical} relative to '{spec.baseline}' (ratio)"
    column = "mbps_per_cpu" if plot.per_cpu and plot.y == "mbps" else plot.y
    return _with_unit(METRIC_TEXT.get(column, column).format(vm=spec.critical), METRIC_COLUMNS[plot.y].unit)


def _line_label(spec: ExperimentSpec, plot: PlotSpec, bench: str, cpu: str | None = None) -> str:
    """Legend entry: whose value the line is."""
    if plot.y.startswith("interf_"):
        return f"interfering VMs, beside VM {spec.critical} running {bench}"
    if cpu is not None:
        return f"VM {spec.critical} vCPU {cpu}, {bench}"
    return f"VM {spec.critical}, {bench}"


def event_meaning(platform: Platform | None, name: str) -> str:
    """What one bandwidth-regulation event is on the platform."""
    bw = platform.bandwidth if platform is not None else None
    if bw is None:
        return f"{name} declares no memory-bandwidth regulation (no events)."
    if bw.counter == "cycles":
        return (f"On {name} one regulation event is one CPU cycle of guest execution (the cycle counter: "
                "QEMU models no memory events), so MB/s budgets there are notional (1 byte per event).")
    evs = "; ".join(f"{ev.name}: PMU event 0x{ev.number:02x}, {ev.bytes_per_event} bytes per event "
                    f"({ev.model} model)" for ev in bw.events)
    return f"On {name} one regulation event is a counted PMU event ({evs})."


def caption(an: Analysis, plot: PlotSpec, number_: int, platform: Platform | None, platform_name: str) -> str:
    """Figure caption: what is plotted, the event, the QEMU caveat, what it reproduces."""
    spec = an.spec
    if plot.kind == "slowdown":
        what = (f"Bars: per benchmark run by VM {spec.critical}, each scenario's primary metric divided by its "
                f"value in scenario '{spec.baseline}' (times: value / baseline; rates: baseline / value); "
                "1 = no slowdown; mean over the successful repetitions, error bars min to max.")
    elif plot.kind == "consumed":
        what = f"{y_label(spec, plot)[0].upper()}{y_label(spec, plot)[1:]} against the {x_label(spec, plot)}"
        what += (f"; dashed: the assigned bandwidth, y = {plot.assigned:g} x." if plot.assigned is not None
                 else "; mean over the successful repetitions.")
    else:
        what = (f"Slowdown of VM {spec.critical} relative to scenario '{spec.baseline}' against the "
                f"{x_label(spec, plot)}; 1 = no overhead; mean over the successful repetitions, error bars "
                "min to max.")
    timebase = (f"virtual time (-icount shift={spec.icount})" if spec.icount is not None
                else "host time (no -icount: not reproducible)")
    text = (f"Figure {number_}: {plot.title}. {what} {event_meaning(platform, platform_name)} "
            f"Measured on QEMU (TCG) in {timebase}; QEMU models no caches, DRAM or memory bus, so "
            "interference and bandwidth figures are not physical: read relative, virtual-time trends only.")
    if plot.reproduces:
        text += f" Reproduces: {plot.reproduces}."
    return text


def _platform(an: Analysis) -> tuple[Platform | None, str]:
    name = next((r.platform for r in an.records if r.platform), an.spec.platform or "")
    if not name:
        return None, "the platform"
    try:
        return load_platform(name), name
    except (ConfigError, OSError):
        return None, name


# --- charts -----------------------------------------------------------------


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


def chart_slowdown(an: Analysis, plot: PlotSpec, ax: Any) -> None:
    labels = [lab for lab in an.labels
              if not plot.scenarios or any(lab == s or lab.startswith(s + "[") for s in plot.scenarios)]
    benches = [b for b in an.benchmarks if any(an.slowdown(an.ok(lab, b), b) for lab in labels)] or an.benchmarks
    labels = [lab for lab in labels if any(an.slowdown(an.ok(lab, b), b) for b in benches)]
    width = 0.8 / max(len(labels), 1)
    any_bar = False
    for i, lab in enumerate(labels):
        xs, ys, lo, hi = [], [], [], []
        for j, b in enumerate(benches):
            s = an.slowdown(an.ok(lab, b), b)
            if s is None:
                continue
            xs.append(j - 0.4 + width * (i + 0.5))
            ys.append(s.mean)
            lo.append(max(s.mean - s.lo, 0.0))
            hi.append(max(s.hi - s.mean, 0.0))
        if xs:
            any_bar = True
            ax.bar(xs, ys, width=width, label=f"scenario {lab}", yerr=[lo, hi], capsize=2)
    ax.axhline(1.0, color="0.3", linewidth=0.8, linestyle="--")
    ax.set_xticks(range(len(benches)))
    ax.set_xticklabels(benches)
    ax.set_xlabel(f"benchmark run by VM {an.spec.critical}")
    ax.set_ylabel(y_label(an.spec, plot))
    if any_bar:
        ax.legend(fontsize="small", ncol=2 if len(labels) > 6 else 1)
    else:
        _no_data(ax, "or no baseline")


def chart_consumed(an: Analysis, plot: PlotSpec, ax: Any) -> None:
    scen = plot.scenarios[0]
    points = an.sweep_points(scen, plot.x)
    xs, ticks = _xs([p[0] for p in points])
    drawn = False
    for b in an.spec.scenario(scen).benchmarks:
        if plot.per_cpu:
            guest = an.spec.benchmark(b).guest
            key = "mbps" if plot.y == "mbps_per_cpu" else plot.y  # a result line is one vCPU
            cpus: dict[str, list[tuple[float, float]]] = {}
            for x, (_, recs) in zip(xs, points, strict=True):
                per: dict[str, list[float]] = {}
                for r in recs:
                    if r.status != OK or r.plan.benchmark != b:
                        continue
                    for vm, fields in r.lines:
                        v = number(fields.get(key))
                        if vm == an.spec.critical and fields.get("bench") == guest and v is not None:
                            per.setdefault(fields.get("cpu", "0"), []).append(v)
                for cpu, vals in per.items():
                    cpus.setdefault(cpu, []).append((x, sum(vals) / len(vals)))
            for cpu, pts in sorted(cpus.items()):
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o",
                        label=_line_label(an.spec, plot, b, cpu))
                drawn = True
        else:
            px, py = [], []
            for x, (_, recs) in zip(xs, points, strict=True):
                s = _stat([r.metrics[plot.y] for r in recs if r.status == OK and r.plan.benchmark == b
                           and plot.y in r.metrics])
                if s is not None:
                    px.append(x)
                    py.append(s.mean)
            if px:
                ax.plot(px, py, marker="o", label=_line_label(an.spec, plot, b))
                drawn = True
    if plot.assigned is not None and ticks is None and xs:
        lo, hi = min(xs), max(xs)
        grid = [lo + (hi - lo) * i / 50 for i in range(51)] if not plot.logx or lo <= 0 else \
            [lo * (hi / lo) ** (i / 50) for i in range(51)]
        ax.plot(grid, [plot.assigned * g for g in grid], linestyle="--", color="0.4",
                label=f"assigned, y = {plot.assigned:g} x")
    _axes(ax, an.spec, plot, ticks, xs)
    ax.set_ylabel(y_label(an.spec, plot))
    if drawn:
        ax.legend(fontsize="small")
    else:
        _no_data(ax, scen)


def chart_overhead(an: Analysis, plot: PlotSpec, ax: Any) -> None:
    scen = plot.scenarios[0]
    points = an.sweep_points(scen, plot.x)
    xs, ticks = _xs([p[0] for p in points])
    drawn = False
    for b in an.spec.scenario(scen).benchmarks:
        px, py, lo, hi = [], [], [], []
        for x, (_, recs) in zip(xs, points, strict=True):
            s = an.slowdown([r for r in recs if r.status == OK and r.plan.benchmark == b], b)
            if s is not None:
                px.append(x)
                py.append(s.mean)
                lo.append(max(s.mean - s.lo, 0.0))
                hi.append(max(s.hi - s.mean, 0.0))
        if px:
            ax.errorbar(px, py, yerr=[lo, hi], marker="o", capsize=3, label=_line_label(an.spec, plot, b))
            drawn = True
    ax.axhline(1.0, color="0.3", linewidth=0.8, linestyle="--")
    _axes(ax, an.spec, plot, ticks, xs)
    ax.set_ylabel(y_label(an.spec, plot))
    if drawn:
        ax.legend(fontsize="small")
    else:
        _no_data(ax, f"{scen} or no baseline")


def _axes(ax: Any, spec: ExperimentSpec, plot: PlotSpec, ticks: list[str] | None, xs: Sequence[float]) -> None:
    ax.set_xlabel(x_label(spec, plot))
    if ticks is not None:
        ax.set_xticks(xs)
        ax.set_xticklabels(ticks)
    elif plot.logx and xs and min(xs) > 0:
        ax.set_xscale("log")
    ax.grid(True, alpha=0.3)


def figure(an: Analysis, plot: PlotSpec, number_: int) -> tuple[Any, str]:
    """One chart as a matplotlib figure, with its caption under the axes;
    returns (figure, caption)."""
    plt = _pyplot()
    platform, platform_name = _platform(an)
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    {"slowdown": chart_slowdown, "consumed": chart_consumed, "overhead": chart_overhead}[plot.kind](an, plot, ax)
    ax.set_title(f"{plot.title} (QEMU: not physical)", fontsize="medium")
    text = caption(an, plot, number_, platform, platform_name)
    lines = textwrap.wrap(text, 120, break_on_hyphens=False, break_long_words=False)
    # under the x label (figure coordinates: the axes' own would overlap it);
    # savefig's tight bounding box grows to take it in
    fig.text(0.02, -0.01, "\n".join(lines), ha="left", va="top", fontsize="x-small", gid="caption")
    return fig, text


def draw(an: Analysis, plots_dir: Path) -> list[tuple[PlotSpec, str, list[Path], str]]:
    """Every chart of the spec: (plot, stem, [png, svg], caption)."""
    plt = _pyplot()
    plots_dir.mkdir(parents=True, exist_ok=True)
    done: list[tuple[PlotSpec, str, list[Path], str]] = []
    used: set[str] = set()
    for number_, plot in enumerate(an.spec.plots, 1):
        stem = plot.kind if not plot.scenarios or plot.kind == "slowdown" else f"{plot.kind}-{plot.scenarios[0]}"
        if plot.x and plot.kind != "slowdown":
            stem += f"-{plot.x}"
        base, n = stem, 2
        while stem in used:
            stem, n = f"{base}-{n}", n + 1
        used.add(stem)
        fig, text = figure(an, plot, number_)
        done.append((plot, stem, _save(fig, plots_dir, stem), text))
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


def render(spec: ExperimentSpec, out: Path, records: Sequence[RunRecord], env: Environment,
           repetitions: int) -> tuple[Path, list[Path]]:
    """Write ``plots/`` and ``report.md`` into ``out``; returns (report, plot files)."""
    an = Analysis(spec, records)
    charts = draw(an, out / "plots")
    files = [p for _, _, paths, _ in charts for p in paths]
    platforms = sorted({r.platform for r in records if r.platform}) or [spec.platform or "(base config)"]

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
        ("tools", f"bulkhead {env.bulkhead_version} ({env.git_rev}), QEMU {env.qemu_version}"),
        ("host", env.host),
        ("generated", datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")),
    ]))

    md.append("## Results\n")
    md.append("Mean over the successful repetitions (min–max in brackets); slowdown relative to "
              f"`{spec.baseline}` for the benchmark's primary metric.\n")
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
            rows.append((
                lab, b, f"{metric.column} ({metric.unit})",
                f"{_fmt(st.mean)} [{_fmt(st.lo)}–{_fmt(st.hi)}]" if st else "–",
                f"{sd.mean:.3f}" if sd else "–",
                _fmt(interf.mean) if interf else "–",
                statuses,
            ))
    md.append(_table(("scenario", "benchmark", "metric", "value", "slowdown", "interferer MB/s", "runs"), rows))

    model_md, model_files = _model_section(an, records, out / "plots")
    md += model_md
    files += model_files

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
    md.append("- `results.csv`: one row per run; `results-lines.csv`: every result line (per vCPU);\n"
              "- `configs/`: the generated system configs; `logs/`: the console of every run;\n"
              "- `plots/`: the charts as PNG and SVG.\n")
    report = out / "report.md"
    report.write_text("\n".join(md))
    return report, files
