#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The cache/DRAM model QEMU plugin: its cost, and the four-setup table
(docs/model.md).

Usage (after scripts/setup.sh, which builds the plugin; about a minute):

    .venv/bin/python bench/cachemodel.py [--reps 3] [--out build/bench-cachemodel]

1. Cost: tests/configs/model-interf.yaml (a pointer-chase victim beside a
   2-CPU memory bomb; --iterations passes of the chase) booted under
   -icount 0 with and without the plugin.
   Under -icount the plugin does not change what the guests execute, so both
   runs are the same virtual run; the ratio of host wall times (median of
   --reps, build excluded) is the plugin's overhead, and the accesses the
   model saw per host second its throughput.
2. The four setups: `bulkhead experiment --model
   bench/experiments/cachemodel.yaml` (solo, interfered, colored,
   regulated); its table of model columns is printed (also in the
   experiment's report.md), with the timing model's modelled time and
   slowdown and the regulated interferer's modelled DRAM bytes per
   regulation period beside its budget.

QEMU models no caches or DRAM: the counters are the plugin's model fed with
QEMU's accesses; who-evicts-whom is exact for that model, miss rates depend
on QEMU's vCPU interleaving under -icount and are never hardware figures.
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bulkhead.experiment import execute as experiment  # noqa: E402
from bulkhead.experiment import spec as experiment_spec
from bulkhead.generate import build, qemu  # noqa: E402
from bulkhead.run import cachemodel, runner  # noqa: E402

CONFIG = ROOT / "tests" / "configs" / "model-interf.yaml"
SPEC = ROOT / "bench" / "experiments" / "cachemodel.yaml"


def timed_run(res: build.BuildResult, model: bool) -> float:
    """Host wall time of one QEMU run of the built system (build excluded)."""
    extra = cachemodel.qemu_args(res.system, res.out, res.elf)[0] if model else []
    argv = qemu.command(res.system.platform, res.elf, (), icount=0, extra=extra)
    start = time.monotonic()
    status, timed_out, output = runner.supervise(argv, timeout=300)
    wall = time.monotonic() - start
    clean, reason = runner.judge(status, timed_out, output, len(res.system.vms))
    if not clean:
        raise SystemExit(f"bench: {CONFIG.name} failed (model={model}): {reason}\n{output[-2000:]}")
    return wall


def cost(out: Path, reps: int, iterations: int) -> list[str]:
    out.mkdir(parents=True, exist_ok=True)
    config = out / "cost.yaml"
    config.write_text(CONFIG.read_text().replace("iterations: 2,", f"iterations: {iterations},"))
    res = build.build(config, out, log=io.StringIO())
    plain = [timed_run(res, False) for _ in range(reps)]
    modelled = [timed_run(res, True) for _ in range(reps)]
    report = json.loads((out / cachemodel.REPORT_NAME).read_text())
    accesses = sum(c["accesses"] for c in report["cpus"])
    t0, t1 = statistics.median(plain), statistics.median(modelled)
    return [
        f"config: {CONFIG.relative_to(ROOT)} with {iterations} passes of the chase, -icount shift=0, "
        f"median of {reps} run(s), host wall time of QEMU",
        f"without plugin: {t0:.2f} s; with plugin: {t1:.2f} s; overhead ratio: {t1 / t0:.2f}x",
        f"modelled accesses: {accesses:,} ({accesses / t1 / 1e6:.2f} M per host second with the plugin)",
    ]


def four_setups(out: Path) -> list[str]:
    spec = experiment_spec.load(SPEC)
    result = experiment.run_experiment(spec, out, progress=sys.stderr, model=True)
    if result.failed():
        raise SystemExit(f"bench: experiment runs failed: see {result.out}")
    cols = ("model_llc_misses", "model_evicted_by_vms", "model_evicted_by_hyp", "model_row_conflicts_by_vms",
            "model_dram_bpp", "model_interf_dram_bpp", "model_time_ns", "model_slowdown",
            "model_interf_dram_bytes_per_period", "model_interf_budget_per_period")
    lines = ["| setup | victim ns/access | " + " | ".join(cols) + " |", "|---" * (len(cols) + 2) + "|"]
    for rec in result.records:
        cells = [(f"{rec.metrics[c]:.3f}" if c == "model_slowdown" else f"{rec.metrics[c]:,.0f}")
                 if c in rec.metrics else "-" for c in cols]
        value = rec.value
        lines.append(f"| {rec.plan.label} | {'-' if value is None else f'{value:.3f}'} | " + " | ".join(cells) + " |")
    lines.append(f"(report: {result.report}; model_dram_bpp: bytes per 100 us of virtual time; model_time_ns, "
                 f"model_slowdown and the per-regulation-period figures are {cachemodel.MODELLED})")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=200, help="passes of the victim's chase in the cost run")
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "bench-cachemodel")
    args = ap.parse_args()
    text = ["## Plugin cost", *cost(args.out / "cost", args.reps, args.iterations), "", "## Four setups",
            *four_setups(args.out / "setups"), "", cachemodel.CAVEAT]
    sys.stdout.write("\n".join(text) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
