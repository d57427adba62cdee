# SPDX-License-Identifier: Apache-2.0
"""The shipped experiment specs (bench/experiments/), each as a reduced
matrix under QEMU: one benchmark, a few scenarios and sweep values, run end
to end (CSV, plots with their side JSON, report, exit 0), and the charts
checked: values inside their axes, no repeated colour/marker, no flagged run
drawn. bao-thesis also gets a planted artefact: a scenario whose regulation
period is longer than the benchmark, which must be flagged and not drawn.

The full specs are benchmarks (docs/experiments.md), not tests."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from bulkhead import cli
from bulkhead.base.errors import BuildError, RunError
from bulkhead.experiment.charts import drawn_problems
from bulkhead.experiment.reduced import reduce_spec
from bulkhead.run import cachemodel

REPO_ROOT = Path(__file__).resolve().parents[2]
SPECS = REPO_ROOT / "bench" / "experiments"


def reduced(name: str, tmp_path: Path, bench: str, params: dict[str, Any], scenarios: list[str],
            sweep_values: int = 2, extra: list[dict[str, Any]] | None = None) -> Path:
    """A copy of a shipped spec with one benchmark (its params overridden),
    the given scenarios and the first values of each sweep."""
    doc = reduce_spec(yaml.safe_load((SPECS / f"{name}.yaml").read_text()), bench, params, scenarios,
                      sweep_values, extra or ())
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def run_reduced(path: Path, out: Path, scenarios: list[str]) -> list[dict[str, str]]:
    argv = ["experiment", str(path), "--out", str(out), "--reps", "1"]
    for s in scenarios:
        argv += ["--only", s]
    assert cli.main(argv) == 0
    with open(out / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows and all(r["status"] in ("ok", "unsupported") for r in rows)
    assert all(r["icount"] == "0" for r in rows)
    report = (out / "report.md").read_text()
    assert report.startswith("> **Not physical") and "## Figures" in report
    flagged = {int(r["run"]) for r in rows if r["flags"]}
    sides = sorted((out / "plots").glob("*.json"))
    assert sides
    for side in sides:
        assert drawn_problems(json.loads(side.read_text()), flagged) == [], side.name
        assert side.with_suffix(".png").is_file() and side.with_suffix(".svg").is_file()
    return rows


def test_bao_thesis_reduced_with_a_planted_artefact(tmp_path: Path) -> None:
    """The regulated interferer beside the write stream, at the 0.1 and 1 ms
    periods, and a planted run whose 100 ms period outlasts the benchmark."""
    planted = {"name": "planted", "extends": "interf", "optional": True,
               "overlay": {"vms": [{"name": "interf", "bandwidth": {"period_us": 100000,
                                                                    "budget_events": 60000000}}]},
               "sweep": {"vms.interf.bandwidth.period_us": [100000]}}
    scen = ["solo", "interf", "interf-mbr", "planted"]
    path = reduced("bao-thesis", tmp_path, "bw-write", {"iterations": 1024}, scen, extra=[planted])
    rows = run_reduced(path, tmp_path / "out", scen)
    by = {(r["scenario"], r["variant"]): r for r in rows}
    assert by[("planted", "period_us=100000")]["flags"].startswith("inside-first-period: the benchmark ran")
    assert not by[("interf-mbr", "period_us=100,budget_events=60000")]["flags"]
    report = (tmp_path / "out" / "report.md").read_text()
    assert "## Artefacts: runs not drawn as results" in report and "| planted[period_us=100000] |" in report


def test_hmbr_reduced(tmp_path: Path) -> None:
    scen = ["solo", "self-period"]
    rows = run_reduced(reduced("hmbr", tmp_path, "bw-read", {"iterations": 64}, scen), tmp_path / "out", scen)
    over = [float(r["value"]) for r in rows if r["scenario"] == "self-period"]
    solo = float(next(r["value"] for r in rows if r["scenario"] == "solo"))
    # the period interrupts cost time, more at 1 us than at 2 us (virtual time: deterministic)
    assert over[0] > over[1] > solo


def test_rtas19_reduced(tmp_path: Path) -> None:
    scen = ["base", "ida", "col-interf"]
    rows = run_reduced(reduced("rtas19", tmp_path, "rand-iter", {"iterations": 256}, scen), tmp_path / "out",
                       scen)
    assert [r["status"] for r in rows] == ["ok"] * 3


def test_rk3588_reduced(tmp_path: Path) -> None:
    scen = ["unregulated", "one-a76"]
    rows = run_reduced(reduced("rk3588-linear", tmp_path, "bw-read", {"iterations": 16}, scen),
                       tmp_path / "out", scen)
    assert [r["status"] for r in rows] == ["ok"] * 3


def test_qos_dma_reduced(tmp_path: Path) -> None:
    scen = ["solo", "dma1-simple"]
    path = reduced("qos-dma", tmp_path, "bw-read", {"iterations": 16}, scen)
    doc = yaml.safe_load(path.read_text())
    doc["scenarios"][1]["overlay"]["vms"][0]["params"].update(period_us=1000, periods=2)
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    run_reduced(path, tmp_path / "out", scen)


def test_clare_reduced(tmp_path: Path) -> None:
    scen = ["c1", "c3"]
    rows = run_reduced(reduced("clare", tmp_path, "echo", {"frames": 100}, scen), tmp_path / "out", scen)
    assert all(float(r["fps"]) > 0 and float(r["rtt_mean_us"]) > 0 for r in rows)


def test_bao_thesis_model_properties(tmp_path: Path) -> None:
    """Issue #28 (items 3 and 4) under ``--model``, the latency benchmark: its
    modelled slowdown is > 1.2 beside the uncolored interferer (regulator
    armed, never throttling), < 1.05 with disjoint colors, and falls with the
    interferer's budget; each regulated scenario has its chart of the
    interferer's modelled DRAM bytes per period (series labelled modelled)
    with its budget as a line. The bare `interf` (no regulator) runs in
    QEMU's long -icount slices and models a slowdown only just above 1
    (docs/model.md "Experiments"). The largest budget never throttles: that
    run is flagged regulator-idle and gets no regulation chart (issue #39)."""
    try:
        cachemodel.plugin_path()
    except BuildError as exc:
        pytest.fail(f"{exc}\nrun 'scripts/setup.sh cachemodel' to build the cache model plugin")
    scen = ["solo", "interf", "interf-col", "interf-mbr-budget"]
    path = reduced("bao-thesis", tmp_path, "latency", {"iterations": 256}, scen, sweep_values=4)
    out = tmp_path / "out"
    argv = ["experiment", str(path), "--out", str(out), "--reps", "1", "--model"]
    for s in scen:
        argv += ["--only", s]
    assert cli.main(argv) == 0
    with open(out / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["status"] for r in rows] == ["ok"] * 7
    by = {(r["scenario"], r["variant"]): float(r["model_slowdown"]) for r in rows}
    budgets = sorted(((int(v.split("=")[1]), s) for (sc, v), s in by.items() if sc == "interf-mbr-budget"),
                     reverse=True)
    assert [b for b, _ in budgets] == [6000000, 1200000, 600000, 300000]
    assert by[("interf", "")] > 1.0, by
    assert budgets[0][1] > 1.2, by
    assert by[("interf-col", "")] < 1.05, by
    ys = [s for _, s in budgets]
    assert all(a > b for a, b in zip(ys, ys[1:], strict=False)), by
    flags = {r["variant"]: r["flags"] for r in rows if r["scenario"] == "interf-mbr-budget"}
    # the largest budget is above the interferer's demand: the regulator never
    # acts, so that run is flagged (issue #39) and gets no regulation chart
    assert "regulator-idle" in flags["budget_events=6000000"], flags
    report = (out / "report.md").read_text()
    assert "## Artefacts: runs not drawn as results" in report
    for budget, _ in budgets:
        side = out / "plots" / f"regulation-interf-mbr-budget-budget_events-{budget}.json"
        if "regulator-idle" in flags[f"budget_events={budget}"]:
            assert not side.exists(), side
            continue
        doc = json.loads(side.read_text())
        assert side.with_suffix(".png").is_file() and side.with_suffix(".svg").is_file()
        assert drawn_problems(doc, set()) == []
        assert doc["series"] and all(s["role"] == "modelled" and "(modelled)" in s["label"]
                                     and len(s["y"]) >= 2 for s in doc["series"])
        assert [ln["y"] for ln in doc["lines"]] == [[float(budget)]]  # notional: 1 B per cycle
        assert "CPU cycles" in doc["caption"]
    assert not list((out / "plots").glob("regulation-interf.*"))  # unregulated: no chart
    assert "## Regulated interferers: modelled DRAM traffic against the budget" in (out / "report.md").read_text()


def test_rtas19_reduced_in_timing_mode(tmp_path: Path) -> None:
    """Issue #37, item 6: a study spec, reduced, runs end to end with --timing:
    no run is flagged host-time (modelled time, no -icount), and the report's
    'Published against Bulkhead' table (and agreement.csv) has a row per
    published value: the baseline's point not comparable, the interfered one
    compared (matched or not), the other benchmark's not run."""
    try:
        cachemodel.plugin_path()
        cachemodel.timing_qemu("qemu-system-aarch64")
    except (BuildError, RunError) as exc:
        pytest.fail(f"{exc}\nrun 'scripts/setup.sh cachemodel' / 'scripts/setup.sh qemu-timing'")
    scen = ["base", "interf"]
    path = reduced("rtas19", tmp_path, "rand-iter", {"iterations": 32}, scen)
    doc = yaml.safe_load(path.read_text())
    # one interfering vCPU: 4 vCPU threads in lock-step on a 2-core host cost ~40x the wall time of 2
    next(s for s in doc["scenarios"] if s["name"] == "interf")["overlay"]["vms"][0]["cpus"] = [1]
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    out = tmp_path / "studies" / "rtas19"  # as bench/studies_timing.py lays its runs out
    assert cli.main(["experiment", str(path), "--out", str(out), "--reps", "1", "--timing",
                     *(a for s in scen for a in ("--only", s))]) == 0
    with open(out / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["status"], r["icount"], r["flags"]) for r in rows] == [("ok", "", "")] * 2
    with open(out / "agreement.csv", newline="") as f:
        verdicts = {(r["benchmark"], r["at"]): r["verdict"] for r in csv.DictReader(f)}
    assert len(verdicts) == 10
    assert verdicts[("rand-iter", "base")] == "not comparable"
    assert verdicts[("rand-iter", "interf")] in ("matched", "not matched")
    assert verdicts[("seq-iter", "interf")] == "not comparable"
    report = (out / "report.md").read_text()
    assert "## Published against Bulkhead" in report and "modelled time (timing mode" in report
    # bench/studies_timing.py's summary of these runs (its smoke test: the runs are this test's)
    script = Path(__file__).resolve().parents[2] / "bench" / "studies_timing.py"
    done = subprocess.run([sys.executable, str(script), "--summary-only", "--study", "rtas19",
                           "--out", str(tmp_path / "studies")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    summary = (tmp_path / "studies" / "summary.md").read_text()
    assert "## rtas19" in summary and "runs: 2 ok" in summary, summary
    assert summary.count("| rand-iter |") == 5 and "| not comparable" in summary, summary
