# SPDX-License-Identifier: Apache-2.0
"""An experiment's journal: ``results.csv`` (one row per run) and
``results-lines.csv`` (every result line), rewritten atomically after every
run, and read back for ``--resume`` (the runs already recorded, checked
against the matrix) and ``--report-only``.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bulkhead import __version__
from bulkhead.base.errors import BuildError
from bulkhead.experiment import modelled
from bulkhead.experiment.record import Environment, RunRecord
from bulkhead.experiment.results import METRIC_COLUMNS
from bulkhead.experiment.spec import ExperimentSpec, RunPlan
from bulkhead.run import cachemodel

FIXED_HEAD = ("run", "scenario", "variant")
FIXED_MID = ("benchmark", "guest", "repetition", "status", "metric", "value", "unit")
FIXED_TAIL = ("flags", "wall_s", "config", "config_hash", "platform", "icount", "bulkhead_version", "git_rev",
              "qemu_version", "host", "error")
PLACE_COLUMN = "place"  # after "host", in an experiment run on labgrid places (docs/farm.md)
LINE_HEAD = ("run", "scenario", "variant", "benchmark", "repetition", "vm", "bench", "cpu")


def _fmt(value: float | None) -> str:
    if value is None:
        return ""
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.6g}"


def csv_columns(spec: ExperimentSpec, model: bool = False, place: bool = False,
                modelled_keys: Sequence[str] = ()) -> list[str]:
    extra = (list(cachemodel.MODEL_COLUMNS) if model else []) + list(modelled_keys)
    tail = list(FIXED_TAIL)
    if place:
        tail.insert(tail.index("host") + 1, PLACE_COLUMN)
    return [*FIXED_HEAD, *spec.sweep_labels(), *FIXED_MID, *METRIC_COLUMNS, *extra, *tail]


def has_model(records: Sequence[RunRecord]) -> bool:
    """Whether a run has the cache model's columns."""
    return any(k in cachemodel.MODEL_COLUMNS for r in records for k in r.metrics)


def write_results(path: Path, spec: ExperimentSpec, records: Sequence[RunRecord], env: Environment,
                  place: bool = False) -> None:
    """Rewrites ``path`` (atomically) with one row per record; ``place``:
    with the ``place`` column."""
    model = has_model(records)
    keys = modelled.columns(records)
    columns = csv_columns(spec, model, place, keys)
    tmp = path.with_suffix(".csv.tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns)
        w.writeheader()
        for rec in sorted(records, key=lambda r: r.plan.index):
            row: dict[str, Any] = {
                "run": rec.plan.index, "scenario": rec.plan.scenario, "variant": rec.plan.variant_text,
                "benchmark": rec.plan.benchmark, "guest": rec.guest, "repetition": rec.plan.repetition,
                "status": rec.status, "metric": rec.metric, "value": _fmt(rec.value), "unit": rec.unit,
                "wall_s": f"{rec.wall_s:.2f}" if rec.wall_s else "", "config": _rel(rec.config, path.parent),
                "config_hash": rec.config_hash, "platform": rec.platform,
                "icount": "" if spec.icount is None else spec.icount,
                "bulkhead_version": env.bulkhead_version, "git_rev": env.git_rev,
                "qemu_version": env.qemu_version, "host": env.host,
                "error": " | ".join(rec.error.splitlines()),
                "flags": " | ".join(rec.flags),
            }
            if place:
                row[PLACE_COLUMN] = rec.place
            for label, value in rec.plan.variant:
                row[label] = value
            for key in [*METRIC_COLUMNS, *(cachemodel.MODEL_COLUMNS if model else ()), *keys]:
                row[key] = _fmt(rec.metrics.get(key))
            w.writerow(row)
    os.replace(tmp, path)


def write_lines(path: Path, records: Sequence[RunRecord]) -> None:
    keys: list[str] = []
    for rec in records:
        for _, fields in rec.lines:
            for k in fields:
                if k not in keys and k not in LINE_HEAD:
                    keys.append(k)
    columns = [*LINE_HEAD, *keys]
    tmp = path.with_suffix(".csv.tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns)
        w.writeheader()
        for rec in sorted(records, key=lambda r: r.plan.index):
            for vm, fields in rec.lines:
                row: dict[str, Any] = dict(fields)
                row.update({"run": rec.plan.index, "scenario": rec.plan.scenario,
                            "variant": rec.plan.variant_text, "benchmark": rec.plan.benchmark,
                            "repetition": rec.plan.repetition, "vm": vm})
                w.writerow(row)
    os.replace(tmp, path)


def _rel(path: str, base: Path) -> str:
    if not path:
        return ""
    try:
        return os.path.relpath(path, base)
    except ValueError:
        return path


def recorded_runs(spec: ExperimentSpec, out: Path, plans: Sequence[RunPlan]) -> list[RunRecord]:
    """The runs ``out/results.csv`` records (``--resume``), checked against
    the matrix: each recorded run must be the same scenario, sweep values,
    benchmark and repetition as the plan with its index."""
    results = out / "results.csv"
    if not results.is_file():
        return []
    by_index = {p.index: p for p in plans}
    with open(results, newline="") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        plan = by_index.get(int(row["run"]))
        got = (row["scenario"], row["variant"], row["benchmark"], row["repetition"])
        if plan is None or got != (plan.scenario, plan.variant_text, plan.benchmark, str(plan.repetition)):
            raise BuildError(f"{results}: run {row['run']} ({', '.join(got)}) is not in this matrix; "
                             "--resume continues the same spec with the same --reps/--only "
                             "(or start again with another --out)")
    records, _ = records_from_csv(spec, out)
    for rec in records:
        rec.plan = by_index[rec.plan.index]
    return records


def records_from_csv(spec: ExperimentSpec, out: Path) -> tuple[list[RunRecord], Environment]:
    """Rebuild the records of an earlier run from its CSV files (``--report-only``)."""
    results, lines_csv = out / "results.csv", out / "results-lines.csv"
    if not results.is_file():
        raise BuildError(f"{results}: no results to report on (run the experiment first)")
    records: list[RunRecord] = []
    env = Environment(__version__, "unknown", "unknown", "unknown")
    labels = spec.sweep_labels()
    by_run: dict[int, RunRecord] = {}
    with open(results, newline="") as f:
        for row in csv.DictReader(f):
            variant = tuple((lab, _parse_scalar(row[lab])) for lab in labels if row.get(lab, "") != "")
            plan = RunPlan(int(row["run"]), row["scenario"], variant, row["benchmark"], int(row["repetition"]),
                           False)
            metrics = {k: float(row[k]) for k in [*METRIC_COLUMNS, *cachemodel.MODEL_COLUMNS,
                                                  *(c for c in row if modelled.is_modelled(c))]
                       if row.get(k, "") != ""}
            rec = RunRecord(plan, row["guest"], row["metric"], row.get("unit", ""), row["status"],
                            row.get("error", ""), metrics, [], row.get("config", ""),
                            row.get("config_hash", ""), row.get("platform", ""),
                            float(row["wall_s"]) if row.get("wall_s") else 0.0, row.get(PLACE_COLUMN) or "",
                            [f.strip() for f in (row.get("flags") or "").split(" | ") if f.strip()],
                            icount=int(row["icount"]) if (row.get("icount") or "").isdigit() else None)
            env = Environment(row.get("bulkhead_version", ""), row.get("git_rev", ""),
                              row.get("qemu_version", ""), row.get("host", ""))
            records.append(rec)
            by_run[plan.index] = rec
    if lines_csv.is_file():
        with open(lines_csv, newline="") as f:
            for row in csv.DictReader(f):
                found = by_run.get(int(row["run"]))
                if found is not None:
                    fields = {k: v for k, v in row.items() if k not in LINE_HEAD[:6] and v not in ("", None)}
                    found.lines.append((row["vm"], fields))
    return records, env


def _parse_scalar(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text
