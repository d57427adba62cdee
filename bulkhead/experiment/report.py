# SPDX-License-Identifier: Apache-2.0
"""The Markdown report of an experiment (report.md): the QEMU caveat, the
environment, per-scenario tables with 95% intervals, the charts
(:mod:`bulkhead.experiment.charts`) with their captions, the cache model's
and the timing model's sections and the regulators' view.
"""

from __future__ import annotations

import datetime
import json
import re
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bulkhead.base.errors import BuildError, ConfigError
from bulkhead.experiment import agreement, latency_hist, modelled, validity
from bulkhead.experiment.analysis import Analysis
from bulkhead.experiment.charts import Drawn, draw, leave_out_flagged, legend, limits, pyplot, save_figure
from bulkhead.experiment.record import OK, STATUSES, Environment, RunRecord
from bulkhead.experiment.spec import ExperimentSpec, PlotSpec
from bulkhead.experiment.stats import Stat
from bulkhead.experiment.stats import stat as _stat
from bulkhead.layout.load import load_system
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


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(out) + "\n"


def _model_chart(labels: list[str], values: dict[str, list[float]], plots_dir: Path) -> list[Path]:
    """Bars per scenario: interference the model saw, and DRAM bytes per period."""
    plt = pyplot()
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
    paths = save_figure(fig, plots_dir, "model")
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
        plt = pyplot()
        plots_dir.mkdir(parents=True, exist_ok=True)
        fig, ax = plt.subplots(figsize=(7.5, 4.2))
        dr = Drawn("modelled-slowdown")
        leave_out_flagged(an, dr, an.records)
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
        limits(ax, PlotSpec("slowdown", "", (), "", "", None, False, False), dr)
        legend(ax)
        ax.set_title("Modelled slowdown (timing model over QEMU: modelled, not measured)", fontsize="medium")
        files = save_figure(fig, plots_dir, "modelled-slowdown")
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
    plt = pyplot()
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
    limits(ax, PlotSpec("consumed", "", (), "", "", None, False, False), dr)
    legend(ax)
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
    paths = save_figure(fig, plots_dir, stem)
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


def _results_table(an: Analysis) -> str:
    """Per scenario and benchmark: the value, N, the slowdown, the interferer's MB/s and the runs' statuses."""
    spec, records = an.spec, an.records
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
    return _table(("scenario", "benchmark", "metric", "value", "N", "slowdown", "interferer MB/s", "runs"), rows)


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
        ("time base", validity.time_base(spec)),
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
    md.append(_results_table(an))

    model_md, model_files = _model_section(an, records, out / "plots")
    md += model_md
    files += model_files
    modelled_md, modelled_files = _modelled_section(an, out / "plots")
    md += modelled_md
    files += modelled_files
    regulation_md, regulation_files = _regulation_section(an, out / "plots")
    md += regulation_md
    files += regulation_files
    hist_md, hist_files = latency_hist.section(an, out / "plots")
    md += hist_md
    files += hist_files

    md.append("## Figures\n")
    for number_, (plot, stem, _, text) in enumerate(charts, 1):
        md.append(f"### Figure {number_}: {plot.title}\n")
        md.append(f"![{plot.title}](plots/{stem}.png)\n")
        md.append(f"*{text}* [SVG](plots/{stem}.svg)\n")

    figures = [(plot, n) for n, (plot, _, _, _) in enumerate(charts, 1)]
    md += agreement.section(an, figures)
    if any(plot.published for plot, _ in figures):
        agreement.write_csv(out / "agreement.csv", an, figures)

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
