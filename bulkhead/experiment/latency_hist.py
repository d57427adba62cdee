# SPDX-License-Identifier: Apache-2.0
"""The report's latency histograms: cyclictest ``-h N`` of the VM under test
(:mod:`bulkhead.experiment.cyclichist`), per benchmark one chart with one
line per scenario (its successful unflagged runs' histograms summed) and a
table of the percentiles, maxima and overflows."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from bulkhead.experiment import cyclichist
from bulkhead.experiment.analysis import Analysis
from bulkhead.experiment.charts import Drawn, leave_out_flagged, legend, pyplot, save_figure
from bulkhead.experiment.record import RunRecord

CAVEAT = ("Under -icount the latencies are virtual time (QEMU runs the vCPUs in turn on one thread), not a "
          "board's: compare scenarios, not absolute values.")


def _hist_rows(an: Analysis, rec: RunRecord) -> list[dict[str, str]]:
    return [f for vm, f in rec.lines if vm == an.spec.critical and f.get("bench") == "cyclictest" and "hist" in f]


def histograms(an: Analysis) -> dict[str, dict[str, tuple[list[int], int, list[RunRecord]]]]:
    """Per benchmark and scenario label: summed buckets, overflows and the
    successful unflagged runs behind them (benchmarks without ``-h``: none)."""
    out: dict[str, dict[str, tuple[list[int], int, list[RunRecord]]]] = {}
    for bench in an.benchmarks:
        for label in an.labels:
            recs = [r for r in an.ok(label, bench) if _hist_rows(an, r)]
            m = cyclichist.merged([f for r in recs for f in _hist_rows(an, r)])
            if m is not None:
                out.setdefault(bench, {})[label] = (m[0], m[1], recs)
    return out


def _text(v: int | None, size: int) -> str:
    return f"{v}" if v is not None else f"> {size - 1}"


def _chart(an: Analysis, bench: str, per_label: dict[str, tuple[list[int], int, list[RunRecord]]],
           plots_dir: Path, stem: str) -> tuple[list[Path], str]:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    dr = Drawn("latency-histogram")
    leave_out_flagged(an, dr, [r for r in an.records if r.plan.benchmark == bench])
    facts = []
    for label, (buckets, overflows, recs) in per_label.items():
        color, marker, _ = dr.style()
        n = sum(buckets) + overflows
        xs = [float(us) for us, c in enumerate(buckets) if c]
        ys = [100.0 * c / n for c in buckets if c]
        name = f"{label}: VM {an.spec.critical}, {bench} ({len(recs)} run(s), {n} samples)"
        # markers and stems on the non-empty buckets only: never joined across empty ones
        ax.vlines(xs, [1e-6] * len(xs), ys, color=color, linewidth=0.8, alpha=0.6)
        ax.plot(xs, ys, linestyle="none", color=color, marker=marker, markersize=4, label=name)
        if overflows:
            ax.plot([float(len(buckets))], [100.0 * overflows / n], linestyle="none", color=color, marker=">",
                    markersize=7)
        dr.add("measured", name, color, marker, xs, ys, [r.plan.index for r in recs])
        p = {key: cyclichist.percentile(buckets, overflows, q) for key, q in cyclichist.PERCENTILES}
        facts.append(f"{label}: p50 {_text(p['p50_us'], len(buckets))} µs, p99 {_text(p['p99_us'], len(buckets))}"
                     f" µs, p99.9 {_text(p['p999_us'], len(buckets))} µs, {overflows} of {n} samples "
                     f"({100.0 * overflows / n:.1f}%) at {len(buckets)} µs or more")
    ax.set_yscale("log")
    dr.yscale = "log"
    low = min((y for ser in dr.series for y in ser["y"]), default=1.0)
    ax.set_ylim(low / 2, 150.0)
    ax.set_xlabel("wake-up latency of the cyclictest threads (µs; ▸ at the right end: samples beyond the histogram)")
    ax.set_ylabel("share of the samples (% per 1-µs bucket)")
    ax.grid(True, alpha=0.3)
    legend(ax)
    title = f"Wake-up latency histogram of VM {an.spec.critical}, benchmark {bench}"
    ax.set_title("\n".join(textwrap.wrap(title, 90)), fontsize="medium")
    text = (f"{title}: per scenario the cyclictest -h histograms of its successful unflagged runs summed, as a "
            f"share of all samples per 1-µs bucket (log scale; empty buckets not drawn). " + "; ".join(facts) + ". "
            + (dr.summary() + " " if dr.summary() else "") + CAVEAT)
    fig.text(0.02, -0.01, "\n".join(textwrap.wrap(text, 120, break_on_hyphens=False)), ha="left", va="top",
             fontsize="x-small", gid="caption")
    paths = save_figure(fig, plots_dir, stem)
    side = plots_dir / f"{stem}.json"
    side.write_text(json.dumps({"benchmark": bench, "caption": text, **dr.document()}, indent=1) + "\n")
    plt.close(fig)
    return [*paths, side], text


def section(an: Analysis, plots_dir: Path) -> tuple[list[str], list[Path]]:
    """The report's *Latency histograms* section, if any run has a histogram."""
    found = histograms(an)
    if not found:
        return [], []
    plots_dir.mkdir(parents=True, exist_ok=True)
    md = ["## Latency histograms\n",
          "cyclictest `-h N` of the VM under test: percentiles by nearest rank over all samples of the "
          "successful unflagged runs (all threads); `> N-1` when a percentile lies beyond the histogram "
          "(overflows: raise `-h`). Per run in `results.csv` (`lat_p50_us`, `lat_p99_us`, `lat_p999_us`, "
          "`lat_max_us`, `lat_overflows`).\n",
          "| scenario | benchmark | runs | samples | p50 (µs) | p99 (µs) | p99.9 (µs) | max (µs) | overflows |",
          "|---|---|---|---|---|---|---|---|---|"]
    files: list[Path] = []
    for bench, per_label in found.items():
        for label, (buckets, overflows, recs) in per_label.items():
            p = [_text(cyclichist.percentile(buckets, overflows, q), len(buckets)) for _, q in cyclichist.PERCENTILES]
            top = max(int(f["max_us"]) for r in recs for f in _hist_rows(an, r))
            md.append(f"| {label} | {bench} | {len(recs)} | {sum(buckets) + overflows} | " + " | ".join(p)
                      + f" | {top} | {overflows} |")
        stem = f"latency-hist-{bench}"
        paths, text = _chart(an, bench, per_label, plots_dir, stem)
        files += paths
        md.append(f"\n![{bench}: latency histogram](plots/{stem}.png)\n")
        md.append(f"*{text}* [SVG](plots/{stem}.svg)\n")
    return md, files
