# SPDX-License-Identifier: Apache-2.0
"""``bulkhead experiment``: run a spec's scenario matrix, collect, report.

For every run of the matrix (:func:`bulkhead.experiment.matrix.expand`) the
runner writes the generated system config to ``<out>/configs/``, checks it
(an invalid config is recorded with status ``invalid``, or ``unsupported``
for an optional scenario, and the matrix goes on), boots it with
:func:`bulkhead.run.runner.run`, keeps the console in ``<out>/logs/`` and parses
the guests' ``result`` lines. Output:

- ``results.csv``: one row per run (scenario, sweep values, benchmark,
  repetition, status, primary metric and metric columns, config hash, tool
  versions, host), rewritten after every run;
- ``results-lines.csv``: every result line of every VM (per-vCPU values);
- ``plots/*.png|svg`` and ``report.md`` (:mod:`bulkhead.experiment.report`).
"""

from __future__ import annotations

import argparse
import contextlib
import platform as host_platform
import shutil
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

import yaml

from bulkhead.base import term
from bulkhead.base import version as version_mod
from bulkhead.base.errors import BuildError, ConfigError, RunError
from bulkhead.base.tree import REPO_ROOT
from bulkhead.experiment import bundle, modelled, stats, validity, workloads
from bulkhead.experiment.journal import (
    csv_columns,
    has_model,
    recorded_runs,
    records_from_csv,
    write_lines,
    write_results,
)
from bulkhead.experiment.matrix import describe_matrix, expand, generate, selected
from bulkhead.experiment.plain import PathError
from bulkhead.experiment.record import (
    BUILD_ERROR,
    FAIL,
    INVALID,
    OK,
    STATUSES,
    TIMEOUT,
    UNSUPPORTED,
    Environment,
    RunRecord,
)
from bulkhead.experiment.results import (
    guest_failures,
    guest_passed,
    parse_results,
    reduce_metrics,
)
from bulkhead.experiment.spec import ExperimentSpec, RunPlan
from bulkhead.layout.load import display_path, load_system
from bulkhead.run import cachemodel
from bulkhead.run import runner as runner_mod
from bulkhead.run.backend import Backend, RunOptions
from bulkhead.run.farm import PlaceLost


@dataclass
class ExperimentResult:
    spec: ExperimentSpec
    out: Path
    records: list[RunRecord]
    env: Environment
    csv: Path
    lines_csv: Path
    report: Path | None = None
    plots: list[Path] = field(default_factory=list)

    def failed(self) -> list[RunRecord]:
        """Runs that did not succeed, optional scenarios' unsupported configs aside."""
        return [r for r in self.records if r.status not in (OK, UNSUPPORTED)]


@dataclass(frozen=True)
class _Config:
    path: Path
    config_hash: str
    platform: str
    qemu_binary: str
    error: str  # "" if valid


# --- environment ------------------------------------------------------------


def qemu_version(binary: str) -> str:
    try:
        proc = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30,
                              stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    first = proc.stdout.strip().splitlines()[0] if proc.stdout.strip() else ""
    marker = "version "
    return first.split(marker, 1)[1].split()[0] if marker in first else (first or "unknown")


def environment(qemu_binary: str, rev: version_mod.Revision | None = None) -> Environment:
    """The tools' versions; ``rev``: the tree's state (read now if not given).
    The commit is dirty if a tracked or untracked file differs from it."""
    rev = rev or version_mod.revision()
    return Environment(rev.version, rev.short, qemu_version(qemu_binary), host_platform.node() or "unknown")


# --- progress ---------------------------------------------------------------


class Progress:
    """A progress bar with an ETA on a terminal (rich); a line per run otherwise."""

    def __init__(self, total: int, stream: TextIO | None) -> None:
        self.total = total
        self.done = 0
        self.stream = stream
        self.tty = term.is_tty(stream)
        self.bar: term.ProgressBar | None = None
        self.lock = threading.Lock()
        self.counts: dict[str, int] = {}

    def update(self, record: RunRecord) -> None:
        with self.lock:
            self.done += 1
            self.counts[record.status] = self.counts.get(record.status, 0) + 1
            if self.stream is None:
                return
            what = f"{record.plan.label} {record.plan.benchmark} #{record.plan.repetition}"
            if record.place:
                what += f" on {record.place}"
            detail = f"{record.status}" + (f": {record.error.splitlines()[0]}" if record.error else "")
            if self.bar is not None:
                if record.status not in (OK, UNSUPPORTED):
                    self.bar.print(f"  {what}: {detail}")
                self.bar.advance(f"{what}: {record.status}")
                if self.done == self.total:
                    self.end()
                return
            self.stream.write(f"[{self.done}/{self.total}] {what}: {detail} ({record.wall_s:.1f} s)\n")
            self.stream.flush()

    def note(self, text: str) -> None:
        """A line above the bar (or in the log of lines)."""
        with self.lock:
            if self.stream is None:
                return
            if self.bar is not None:
                self.bar.print(f"  {text}")
                return
            self.stream.write(f"bulkhead: {text}\n")
            self.stream.flush()

    def begin(self, what: str) -> None:
        if self.stream is None:
            return
        self.stream.write(what + "\n")
        self.stream.flush()
        if self.tty and self.total:
            self.bar = term.ProgressBar(self.stream, self.total, "starting")

    def end(self) -> None:
        """Stops the bar (idempotent; also after an interrupted run)."""
        if self.bar is not None:
            self.bar.stop()
            self.bar = None

    def summary(self) -> str:
        parts = [f"{n} {s}" for s, n in sorted(self.counts.items(), key=lambda kv: STATUSES.index(kv[0]))]
        return ", ".join(parts) if parts else "nothing run"


# --- configs ----------------------------------------------------------------


class _Dumper(yaml.SafeDumper):
    """Safe YAML, with large integers (addresses) in hex."""


def _represent_int(dumper: yaml.SafeDumper, value: int) -> yaml.Node:
    text = hex(value) if value >= 0x10000 else str(value)
    return dumper.represent_scalar("tag:yaml.org,2002:int", text)


_Dumper.add_representer(int, _represent_int)


def _first_lines(text: str, n: int = 3) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    more = len(lines) - n
    return "\n".join(lines[:n]) + (f"\n(+{more} more)" if more > 0 else "")


def prepare_config(spec: ExperimentSpec, plan: RunPlan, configs_dir: Path, platform: str | None) -> _Config:
    """Write and check the generated config of ``plan``."""
    path = configs_dir / f"{plan.config_stem}.yaml"
    header = (f"# Generated by bulkhead experiment {spec.name} from {spec.display}: scenario "
              f"{plan.label}, benchmark {plan.benchmark}.\n")
    try:
        doc = generate(spec, plan, platform)
    except PathError as exc:
        path.write_text(header + f"# not generated: {exc}\n")
        return _Config(path, "", platform or spec.platform or "", "", f"{spec.display}: scenario "
                       f"'{plan.scenario}': {exc}")
    text = header + yaml.dump(doc, Dumper=_Dumper, sort_keys=False, default_flow_style=None, width=100)
    path.write_text(text)
    platform_name = str(doc.get("platform", ""))
    try:
        system = load_system(path)
    except ConfigError as exc:
        return _Config(path, "", platform_name, "", _first_lines(str(exc)))
    return _Config(path, f"0x{system.config_hash:016x}", system.platform.name, 
                   system.platform.qemu.binary if system.platform.qemu else "", "")


# --- one run ----------------------------------------------------------------


def execute(spec: ExperimentSpec, plan: RunPlan, cfg: _Config, build_dir: Path, logs_dir: Path,
            backend: Backend = runner_mod.run, model: bool = False, timing: int | None = None) -> RunRecord:
    """Boot one run and judge it (``timing``: in timing mode, that quantum in ns)."""
    bench = spec.benchmark(plan.benchmark)
    rec = RunRecord(plan, bench.guest, bench.metric.column, bench.metric.unit, OK,
                    config=str(cfg.path), config_hash=cfg.config_hash, platform=cfg.platform, icount=spec.icount)
    if cfg.error:
        rec.status = UNSUPPORTED if plan.optional else INVALID
        rec.error = cfg.error
        return rec
    log_path = logs_dir / f"{plan.config_stem}-r{plan.repetition}.log"
    build_log = logs_dir / f"build-{build_dir.name}.log"
    start = time.monotonic()
    try:
        with open(build_log, "a") as blog, workloads.host_peer(bench.command), _network(spec) as netdev:
            result = backend(cfg.path, RunOptions(timeout=spec.timeout, icount=spec.icount, out=build_dir,
                                                  build_log=blog, model=model, timing=timing,
                                                  netdev=netdev or None))
    except ConfigError as exc:
        rec.status = UNSUPPORTED if plan.optional else INVALID
        rec.error = _first_lines(str(exc))
        return rec
    except PlaceLost:
        raise  # not the config's fault: the run goes to another place
    except BuildError as exc:
        rec.status = BUILD_ERROR
        rec.error = f"{exc} (see {build_log})"
        return rec
    rec.wall_s = time.monotonic() - start
    log_path.write_text(result.output)
    rec.artefacts = bundle.run_artefacts(build_dir, result.argv)

    own = result.lines(spec.critical)
    for vm in _vm_names(result.output):
        for fields in parse_results(result.lines(vm)):
            rec.lines.append((vm, fields))
        if bench.command:  # Linux workloads print no result lines: parse their tools' output
            rec.lines.extend((vm, fields) for fields in workloads.result_fields(result.lines(vm), strict=False))
    own_results = [f for vm, f in rec.lines if vm == spec.critical]
    other_results = [f for vm, f in rec.lines if vm != spec.critical]
    rec.metrics = reduce_metrics(bench.guest, own_results, other_results)
    if bench.command:
        rec.metrics.update(workloads.reduce_workload(own_results, other_results))
    if model and result.model_report is not None and result.model_report.is_file():
        report = cachemodel.load_report(result.model_report)
        # kept per run (the build directory's is the next run's): the
        # per-period series for plots (docs/model.md "Data interface")
        shutil.copyfile(result.model_report, log_path.with_suffix(cachemodel.RUN_REPORT_SUFFIX))
        system = load_system(cfg.path)
        rec.metrics.update(cachemodel.metrics(report, spec.critical, cachemodel.period_of(system), system))

    rec.metrics.update(modelled.from_result(result, spec.critical))
    if rec.status == OK:
        rec.flags = validity.run_flags(spec, rec, cfg.path)

    failures = guest_failures(own, bench.guest)
    workload_failure = workloads.failure(own, bench.guest) if bench.command else None
    if result.timed_out:
        rec.status, rec.error = TIMEOUT, result.reason
    elif failures:
        rec.status, rec.error = FAIL, failures[0]
    elif not result.clean:
        rec.status, rec.error = FAIL, result.reason
    elif workload_failure:
        rec.status, rec.error = FAIL, workload_failure
    elif not bench.command and not guest_passed(own, bench.guest):
        rec.status, rec.error = FAIL, f"VM '{spec.critical}' printed no '{bench.guest}: PASS' line"
    elif rec.value is None:
        rec.status, rec.error = FAIL, f"no '{rec.metric}' in the result lines of VM '{spec.critical}'"
    if rec.status != OK:
        rec.error += f" (log: {log_path})"
    return rec


@contextlib.contextmanager
def _network(spec: ExperimentSpec) -> Iterator[str]:
    """``network: peer``: a frame peer (bulkhead/run/netpeer.py) for the run's
    shared I/O device, as bench/shared_io.py uses; yields its -netdev value."""
    if spec.network != "peer":
        yield ""
        return
    from bulkhead.run.netpeer import Peer

    with Peer(max_frames=200_000, max_seconds=spec.timeout + 60) as peer:
        yield peer.netdev()


def _vm_names(output: str) -> list[str]:
    names: list[str] = []
    for line in output.splitlines():
        if line.startswith("[") and "] " in line:
            name = line[1:line.index("] ")]
            if name != "bulkhead" and name not in names:
                names.append(name)
    return names


# --- the whole matrix -------------------------------------------------------


def default_out(spec_path: Path | str) -> Path:
    return REPO_ROOT / "build" / "experiments" / Path(spec_path).stem


@dataclass(frozen=True)
class Slot:
    """Where runs execute, one at a time: a local QEMU (``w0``, ``w1``, ...
    for ``--jobs``) or a labgrid place (its name; ``backend`` acquires it,
    boots there and releases it, raising PlaceLost if the place fails)."""

    name: str
    backend: Backend
    place: str = ""


def run_experiment(
    spec: ExperimentSpec,
    out: Path,
    *,
    jobs: int = 1,
    repetitions: int | None = None,
    platform: str | None = None,
    only: Sequence[str] | None = None,
    progress: TextIO | None = None,
    backend: Backend = runner_mod.run,
    report: bool = True,
    model: bool = False,
    slots: Sequence[Slot] | None = None,
    resume: bool = False,
    benchmarks: Sequence[str] | None = None,
    workloads: Sequence[str] | None = None,
    timing: int | None = None,
) -> ExperimentResult:
    """Run the matrix into ``out``; never raises for a single run's failure.
    ``model``: under the cache model plugin (docs/model.md), -icount 0 if the
    spec sets no shift (the plugin needs -icount).
    ``slots``: where runs execute, in parallel (default: ``jobs`` local
    QEMUs running ``backend``); a run whose slot is lost under it
    (:class:`bulkhead.run.farm.PlaceLost`) is re-queued on another slot and
    recorded once. Labgrid slots add the ``place`` column.
    ``resume``: keep the runs ``out/results.csv`` already records (the
    journal, rewritten after every run) and run only the missing ones.
    ``benchmarks``/``workloads``: run only these benchmarks (matrix.selected).
    ``timing``: every run in timing mode with that quantum in ns (docs/model.md
    "Timing mode"; implies ``model``, without -icount whatever the spec says).
    Writes the bundle (bundle.json, bundle/: docs/experiments.md) and, with
    the report, summary.csv (means and 95% intervals)."""
    if timing is not None:
        model = True
        spec = replace(spec, icount=None)
    elif model and spec.icount is None:
        spec = replace(spec, icount=0)
    out = out.absolute()
    configs_dir, logs_dir, build_root = out / "configs", out / "logs", out / "build"
    for d in (configs_dir, logs_dir, build_root):
        d.mkdir(parents=True, exist_ok=True)
    plans = expand(spec, repetitions, only, benchmarks, workloads)
    if slots is None:
        slots = [Slot(f"w{i}", backend) for i in range(max(1, jobs))]
    with_place = any(slot.place for slot in slots)

    configs: dict[str, _Config] = {}
    for plan in plans:
        if plan.config_stem not in configs:
            configs[plan.config_stem] = prepare_config(spec, plan, configs_dir, platform)
    rev = version_mod.revision()
    env, qemu = _qemu_of(configs, rev, timing is not None)
    command = {"repetitions": repetitions or spec.repetitions, "only": list(only or []),
               "benchmarks": list(benchmarks or []), "workloads": list(workloads or []), "platform": platform,
               "model": model, "timing_quantum_ns": timing}
    booted: dict[str, dict[str, Any]] = dict(_booted(out)) if resume else {}

    def write_bundle() -> None:
        for rec in result.records:
            if rec.artefacts:
                booted.setdefault(rec.plan.config_stem, rec.artefacts)
        names = sorted({c.platform for c in configs.values() if c.platform} | {platform or spec.platform or ""})
        bundle.write(spec, out, rev, command, qemu, names, booted,
                     csv_columns(spec, has_model(result.records), with_place, modelled.columns(result.records)))

    result = ExperimentResult(spec, out, [], env, out / "results.csv", out / "results-lines.csv")
    kept = recorded_runs(spec, out, plans) if resume else []
    result.records.extend(kept)
    done = {r.plan.index for r in kept}
    todo = [p for p in plans if p.index not in done]
    bar = Progress(len(todo), progress)
    what = f"{len(plans)} run(s)" if not kept else f"{len(todo)} of {len(plans)} run(s) (resumed: {len(kept)} recorded)"
    where = f" on {len(slots)} place(s): {', '.join(s.name for s in slots)}" if with_place else ""
    bar.begin(f"bulkhead: experiment {spec.name}: {what}{where} into {display_path(out)}")
    lock = threading.Lock()
    timed_out: set[str] = set()  # configs that timed out (under -icount a repetition would too)

    def record(rec: RunRecord) -> None:
        with lock:
            if rec.status == TIMEOUT and spec.icount is not None:
                timed_out.add(rec.plan.config_stem)
            result.records.append(rec)
            write_results(result.csv, spec, result.records, env, with_place)
        bar.update(rec)

    def one(plan: RunPlan, slot: Slot) -> None:
        if plan.config_stem in timed_out:
            rec = _not_run(spec, plan, configs[plan.config_stem], TIMEOUT, "not run: an earlier repetition of "
                           "this config timed out, and runs under -icount are deterministic")
        else:
            rec = execute(spec, plan, configs[plan.config_stem], build_root / slot.name, logs_dir, slot.backend,
                          model, timing)
            rec.place = slot.place
        record(rec)

    try:
        left = _dispatch(todo, slots, one, bar)
        for plan in left:  # every slot was lost
            record(_not_run(spec, plan, configs[plan.config_stem], FAIL, "not run: every place was lost"))
    finally:
        bar.end()
        result.records.sort(key=lambda r: r.plan.index)
        model_slowdowns(spec, result.records)
        write_results(result.csv, spec, result.records, env, with_place)
        write_lines(result.lines_csv, result.records)
        write_bundle()
    if progress is not None:
        progress.write(f"bulkhead: experiment {spec.name}: {bar.summary()}; results in {result.csv}\n")
    if report:
        from bulkhead.experiment import report as experiment_report

        result.report, result.plots = experiment_report.render(spec, out, result.records, env,
                                                                repetitions or spec.repetitions)
        write_results(result.csv, spec, result.records, env, with_place)  # with the charts' flags
        stats.write_summary(out / "summary.csv", spec, result.records)
        if progress is not None:
            progress.write(f"bulkhead: report {result.report}\n")
    return result


def _not_run(spec: ExperimentSpec, plan: RunPlan, cfg: _Config, status: str, why: str) -> RunRecord:
    """The record of a run that was not booted (``status``, ``why``)."""
    bench = spec.benchmark(plan.benchmark)
    return RunRecord(plan, bench.guest, bench.metric.column, bench.metric.unit, status, why, config=str(cfg.path),
                     config_hash=cfg.config_hash, platform=cfg.platform)


def _qemu_of(configs: dict[str, _Config], rev: version_mod.Revision,
             timing: bool = False) -> tuple[Environment, dict[str, str]]:
    """The tools' versions, and the QEMU the configs run on as the bundle records it
    (``timing``: the patched QEMU of timing mode, docs/model.md)."""
    binaries = [c.qemu_binary for c in configs.values() if c.qemu_binary]
    if timing and binaries:
        with contextlib.suppress(RunError):  # the runs report it missing
            binaries = [cachemodel.timing_qemu(binaries[0])]
    env = environment(binaries[0] if binaries else "qemu-system-aarch64", rev)
    qemu_path = bundle.binary(binaries[0] if binaries else "qemu-system-aarch64")
    qemu = {"binary": binaries[0] if binaries else "qemu-system-aarch64", "path": qemu_path or "not found",
            "version": env.qemu_version, "sha256": bundle.sha256(qemu_path) if qemu_path else ""}
    return env, qemu


def _booted(out: Path) -> dict[str, Any]:
    """What the runs of an earlier bundle in ``out`` booted (``--resume``)."""
    try:
        return dict(bundle.load(out).get("booted") or {})
    except BuildError:
        return {}


def model_slowdowns(spec: ExperimentSpec, records: Sequence[RunRecord]) -> None:
    """``model_slowdown`` (docs/model.md): each run's modelled time of the VM
    under test over the mean modelled time of the baseline scenario's
    successful runs of the same benchmark."""
    base: dict[str, list[float]] = {}
    for r in records:
        if r.plan.scenario == spec.baseline and r.status == OK and "model_time_ns" in r.metrics:
            base.setdefault(r.plan.benchmark, []).append(r.metrics["model_time_ns"])
    for r in records:
        ref = base.get(r.plan.benchmark)
        if ref and "model_time_ns" in r.metrics:
            r.metrics["model_slowdown"] = r.metrics["model_time_ns"] / (sum(ref) / len(ref))


def _dispatch(plans: Sequence[RunPlan], slots: Sequence[Slot], one: Callable[[RunPlan, Slot], None],
              bar: Progress) -> list[RunPlan]:
    """Runs every plan on some slot, one at a time per slot, in parallel
    across slots, in matrix order. A run whose slot is lost goes back to the
    front of the queue and the slot is retired. Returns the plans left when
    every slot was lost. The first unexpected error is re-raised (after the
    runs in flight finished); so is an interrupt, after which no new run
    starts."""
    pending = deque(plans)
    cond = threading.Condition()
    state = {"in_flight": 0}
    stop = threading.Event()
    errors: list[BaseException] = []

    def worker(slot: Slot) -> None:
        while True:
            with cond:
                while not pending and state["in_flight"] and not stop.is_set():
                    cond.wait()
                if not pending or stop.is_set():
                    return
                plan = pending.popleft()
                state["in_flight"] += 1
            try:
                one(plan, slot)
            except BaseException as exc:  # noqa: BLE001  # re-raised by the caller (errors), or a lost slot
                with cond:
                    state["in_flight"] -= 1
                    if isinstance(exc, PlaceLost):
                        pending.appendleft(plan)
                    else:
                        errors.append(exc)
                        stop.set()
                    cond.notify_all()
                if isinstance(exc, PlaceLost):
                    bar.note(f"{slot.name}: {exc}; run {plan.index} ({plan.label} {plan.benchmark} "
                             f"#{plan.repetition}) re-queued, {slot.name} takes no more runs")
                return
            with cond:
                state["in_flight"] -= 1
                cond.notify_all()

    if len(slots) == 1:
        try:
            worker(slots[0])
        except BaseException:
            stop.set()
            raise
    else:
        threads = [threading.Thread(target=worker, args=(slot,), name=f"slot-{slot.name}", daemon=True)
                   for slot in slots]
        for t in threads:
            t.start()
        try:
            for t in threads:
                while t.is_alive():
                    t.join(0.2)
        except BaseException:
            with cond:
                stop.set()
                cond.notify_all()
            for t in threads:
                t.join()
            raise
    if errors:
        raise errors[0]
    return list(pending)


# --- command line -----------------------------------------------------------


def _positive_int(text: str) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: '{text}'") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: '{text}'")
    return value


def add_parser(sub: Any) -> None:
    """Register ``bulkhead experiment`` on the CLI's subparsers."""
    p = sub.add_parser(
        "experiment", help="run an experiment spec: scenario matrix -> CSV, plots, report",
        description="Run the scenario matrix of SPEC (bench/experiments/*.yaml; docs/experiments.md) "
                    "under QEMU and write results.csv, plots and report.md into DIR. Exit 0 only if every "
                    "run succeeded (runs of optional scenarios whose config is not supported aside).",
    )
    p.add_argument("spec", metavar="SPEC", type=Path, nargs="?",
                   help="the experiment spec (not with --reproduce, which runs the bundle's)")
    p.add_argument("--out", metavar="DIR", type=Path, help="output directory (default: build/experiments/<spec stem>)")
    p.add_argument("--jobs", metavar="N", type=_positive_int, default=1, help="runs in parallel (default 1)")
    p.add_argument("--reps", "--repeat", metavar="N", dest="reps", type=_positive_int,
                   help="repetitions of every run (default: the spec's)")
    p.add_argument("--platform", metavar="NAME", help="run on platforms/NAME.yaml instead of the spec's platform")
    p.add_argument("--only", metavar="SCENARIO", action="append",
                   help="run only this scenario (repeatable)")
    p.add_argument("--benchmark", metavar="NAME", action="append", dest="benchmarks",
                   help="run only this benchmark (its name or bare-metal guest; repeatable)")
    p.add_argument("--workload", metavar="NAME", action="append", dest="workloads",
                   help="run only the benchmarks of this Linux workload (cyclictest, stress-ng, iperf3, ping, "
                        "or its benchmark's name; repeatable)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="check the spec and every generated config, list the "
                      "matrix, run nothing")
    mode.add_argument("--report-only", action="store_true", help="redraw the plots and report from DIR's CSV files")
    mode.add_argument("--reproduce", metavar="BUNDLE", type=Path,
                      help="re-run the experiment bundle BUNDLE (an earlier --out) with its spec and options into "
                           "DIR (default BUNDLE/reproduce) and report where results differ beyond the spec's "
                           "tolerance, and which inputs differ; exit 1 if results differ")
    p.add_argument("--model", action="store_true",
                   help="run every system under the cache/DRAM model QEMU plugin and add its columns "
                        "(model_*) to results.csv and the report (docs/model.md)")
    p.add_argument("--timing", action="store_true",
                   help="run every system in timing mode: vCPUs side by side in lock-step on the model's "
                        "clocks, without -icount (implies --model; docs/model.md \"Timing mode\")")
    p.add_argument("--quantum", metavar="NS", type=int,
                   help=f"with --timing: the lock-step quantum in modelled ns (default "
                        f"{cachemodel.DEFAULT_QUANTUM_NS})")
    p.add_argument("--resume", action="store_true",
                   help="keep the runs DIR/results.csv already records and run only the missing ones "
                        "(after an interrupted experiment)")
    p.add_argument("--labgrid", metavar="ENV", type=Path,
                   help="run on labgrid places instead of local QEMUs: ENV is a labgrid environment file "
                        "(farm/*.yaml); one run at a time per place, places in parallel, each run acquires "
                        "and releases its place through the coordinator; adds a 'place' column (docs/farm.md)")
    places = p.add_mutually_exclusive_group()
    places.add_argument("--places", metavar="A,B,...", type=_names,
                        help="with --labgrid: the places to use (default: the environment's RemotePlace)")
    places.add_argument("--all-places", action="store_true",
                        help="with --labgrid: every place the coordinator has")


def _names(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"no place names in '{text}'")
    return names


def farm_slots(env_path: Path, places: Sequence[str] | None, all_places: bool,
               progress: TextIO | None) -> tuple[list[Slot], Any]:
    """One slot per labgrid place, and the coordinator session they share
    (the caller closes it)."""
    from bulkhead.run import farm

    env = farm.FarmEnv(env_path)
    coordinator = farm.Coordinator(env.coordinator)
    try:
        names = farm.choose_places(env, coordinator, places, all_places)
    except BaseException:
        coordinator.close()
        raise
    return [Slot(name, farm.PlaceBackend(env, coordinator, name), name) for name in names], coordinator


def command(args: argparse.Namespace) -> int:
    from bulkhead.experiment import spec as experiment_spec

    if args.reproduce is not None:
        return reproduce(args.reproduce, args.out, jobs=args.jobs, progress=sys.stderr)
    if args.spec is None:
        sys.stderr.write("bulkhead: error: experiment: give a SPEC (or --reproduce BUNDLE)\n")
        return 2
    spec = experiment_spec.load(args.spec)
    out = (args.out or default_out(args.spec)).absolute()
    if args.only:
        unknown = [s for s in args.only if s not in {sc.name for sc in spec.scenarios}]
        if unknown:
            raise ConfigError.single(spec.display, f"--only: no scenario named '{unknown[0]}'")
    if (args.benchmarks or args.workloads) and not selected(spec, args.benchmarks, args.workloads):
        raise ConfigError.single(spec.display, "--benchmark/--workload: no benchmark of the spec matches "
                                 + ", ".join([*(args.benchmarks or []), *(args.workloads or [])]) + "; it has: "
                                 + ", ".join(f"{b.name} ({b.guest})" for b in spec.benchmarks))
    if args.dry_run:
        plans = expand(spec, args.reps, args.only, args.benchmarks, args.workloads)
        sys.stdout.write(describe_matrix(spec, plans))
        configs_dir = out / "configs"
        configs_dir.mkdir(parents=True, exist_ok=True)
        seen: set[str] = set()
        counts = {"ok": 0, UNSUPPORTED: 0, INVALID: 0}
        for plan in plans:
            if plan.config_stem in seen:
                continue
            seen.add(plan.config_stem)
            cfg = prepare_config(spec, plan, configs_dir, args.platform)
            state = "ok" if not cfg.error else (UNSUPPORTED if plan.optional else INVALID)
            counts[state] += 1
            if cfg.error:
                sys.stdout.write(f"  {state}: {cfg.error.splitlines()[0]}\n")
        sys.stdout.write(f"configs in {display_path(configs_dir)}: "
                         + ", ".join(f"{n} {s}" for s, n in counts.items() if n) + "\n")
        return 1 if counts[INVALID] else 0
    if args.report_only:
        from bulkhead.experiment import report as experiment_report

        records, env = records_from_csv(spec, out)
        report, _ = experiment_report.render(spec, out, records, env, args.reps or spec.repetitions)
        write_results(out / "results.csv", spec, records, env, any(r.place for r in records))
        stats.write_summary(out / "summary.csv", spec, records)
        sys.stdout.write(f"{report}\n")
        return 0
    if args.labgrid is None and (args.places or args.all_places):
        sys.stderr.write("bulkhead: error: --places and --all-places need --labgrid\n")
        return 2
    slots, coordinator = (None, None)
    if args.labgrid is not None:
        if args.jobs != 1:
            sys.stderr.write("bulkhead: error: --jobs is for local runs; with --labgrid each place runs one "
                             "run at a time, places in parallel\n")
            return 2
        slots, coordinator = farm_slots(args.labgrid, args.places, args.all_places, sys.stderr)
    try:
        result = run_experiment(spec, out, jobs=args.jobs, repetitions=args.reps, platform=args.platform,
                                only=args.only, progress=sys.stderr, model=args.model, slots=slots,
                                resume=args.resume, benchmarks=args.benchmarks, workloads=args.workloads,
                                timing=cachemodel.timing_quantum(args.timing, args.quantum))
    finally:
        if coordinator is not None:
            coordinator.close()
    sys.stdout.write(f"{result.report or result.csv}\n")
    return 1 if result.failed() else 0


def reproduce(bundle_dir: Path, out: Path | None = None, *, jobs: int = 1, progress: TextIO | None = None,
              backend: Backend = runner_mod.run) -> int:
    """``--reproduce``: run the bundle in ``bundle_dir`` again (its
    self-contained spec, with the options it was run with) into ``out``
    (default ``bundle_dir/reproduce``), then write ``out/reproduce.md``:
    the results that differ beyond the spec's tolerance and the inputs that
    differ (toolchain, QEMU, plugin, platforms, configs, booted images).
    Returns 0 if no result differs, 1 otherwise."""
    from bulkhead.experiment import spec as experiment_spec

    bundle_dir = bundle_dir.absolute()
    old = bundle.load(bundle_dir)
    spec = experiment_spec.load(bundle_dir / old["spec"]["file"])
    out = (out or bundle_dir / "reproduce").absolute()
    if out == bundle_dir:
        raise BuildError(f"{out}: --reproduce writes into another directory than the bundle's (--out)")
    cmd = old.get("command") or {}
    result = run_experiment(spec, out, jobs=jobs, repetitions=cmd.get("repetitions"), platform=cmd.get("platform"),
                            only=cmd.get("only") or None, progress=progress, backend=backend,
                            model=bool(cmd.get("model")), benchmarks=cmd.get("benchmarks") or None,
                            workloads=cmd.get("workloads") or None, timing=cmd.get("timing_quantum_ns"))
    diffs = bundle.compare(bundle_dir, out, spec.tolerance)
    inputs = bundle.input_differences(old, bundle.load(out))
    lines = [f"# Reproduction of `{display_path(bundle_dir)}`\n",
             f"Bundle: bulkhead {old['toolchain']['version']}, commit {old['toolchain']['commit'][:12]}"
             f"{' (dirty)' if old['toolchain']['dirty'] else ''}; now: bulkhead {result.env.bulkhead_version}, "
             f"commit {result.env.git_rev}. {len(result.records)} runs, tolerance {spec.tolerance:.2%} "
             "(relative, per value).\n",
             f"## Results that differ ({len(diffs)})\n", *(f"- {d}" for d in diffs), "",
             f"## Inputs that differ ({len(inputs)})\n", *(f"- {d}" for d in inputs), ""]
    (out / "reproduce.md").write_text("\n".join(lines))
    if progress is not None:
        progress.write(f"bulkhead: reproduce: {len(diffs)} result(s) differ beyond the tolerance "
                       f"{spec.tolerance:.2%}, {len(inputs)} input(s) differ; see {out / 'reproduce.md'}\n")
        for d in [*diffs, *inputs][:20]:
            progress.write(f"  {d}\n")
    sys.stdout.write(f"{out / 'reproduce.md'}\n")
    return 1 if diffs else 0
