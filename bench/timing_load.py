#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Timing mode against the host's load: the memory bomb's slowdown of the
victim (tests/configs/timing-neighbours.yaml with the bomb, as
tests/qemu/test_timing.py runs it), unregulated and with bandwidth budgets,
beside a number of busy host processes, and how the lock-step's waits and
timer holds ended (docs/model.md "Liveness", "Held at timer deadlines").

Usage (after scripts/setup.sh; about 10 s of a 2-core host per run):

    .venv/bin/python bench/timing_load.py [--hogs 0 4] [--shares 0 50 5]
                                          [--reps 1] [--period-us 20]
                                          [--out build/bench-timing-load] [--json]

Per number of busy host processes (`--hogs`, each a Python loop that runs
for the whole set of runs), the victim runs alone once (the baseline),
then beside the bomb once per budget share and rep (`--shares`: 0 is
unregulated; else the bomb's budget is that share of its 3 vCPUs' cycles
per `--period-us` period). Per run:

- slowdown: the victim's modelled time in its phase over the baseline's;
- waits, timeouts, kicks: lock-step waits, those that ended on the host-time
  bound, and those that ended because QEMU kicked the vCPU (the timing
  QEMU's `qemu_plugin_vcpu_exit_requested`);
- holds, hold timeouts, hold kicks: the same for the timer-deadline holds.

Timing mode is not bit-exact: host threads interleave within a quantum, so
the slowdowns vary from run to run, and regulated runs more than the rest.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bulkhead.run import cachemodel, runner  # noqa: E402
from bulkhead.run.backend import RunOptions  # noqa: E402
from bulkhead.run.cachemodel import Report  # noqa: E402

BASE = ROOT / "tests" / "configs" / "timing-neighbours.yaml"
NEIGHBOUR_PARAMS = "params: {size: 4K, mode: read, sync: 0}   #v neighbour params"
BOMB = "params: {footprint: exceed, sync: 0}"  # 3 x 2 MiB written over and over
BUDGET = "    #v neighbour budget"
SOLO = """platform: qemu-virt
vms:
  - name: victim
    cpus: [0]
    memory:
      - {ipa: 0x40000000, size: 4M}
    guest: bandwidth
    params: {mode: read, size: 768K, iterations: 8}
"""
COUNTS = {"waits": "lockstep_waits", "timeouts": "lockstep_timeouts", "kicks": "lockstep_kicks",
          "holds": "deadline_waits", "hold_timeouts": "deadline_timeouts", "hold_kicks": "deadline_kicks"}


def bomb_config(share: int, period_us: int) -> str:
    text = BASE.read_text().replace(NEIGHBOUR_PARAMS, BOMB)
    if share:
        budget = 3 * period_us * 1000 * share // 100  # cycles at 1 GHz over the bomb's 3 vCPUs
        text = text.replace(BUDGET, f"    bandwidth: {{period_us: {period_us}, budget_events: {budget}}}")
    return text


def timing_run(out: Path, name: str, text: str) -> Report:
    config = out / f"{name}.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(text)
    res = runner.run(config, RunOptions(timeout=1800, out=out / "build", timing=cachemodel.DEFAULT_QUANTUM_NS,
                                        build_log=sys.stderr))
    if not res.clean or res.model_report is None:
        raise SystemExit(f"bench: {name}: {res.reason}\n{res.output[-2000:]}")
    return cachemodel.load_report(res.model_report)


def measure(out: Path, hogs: int, shares: list[int], reps: int, period_us: int) -> list[dict[str, Any]]:
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(hogs)]
    rows = []
    try:
        solo = timing_run(out, "solo", SOLO)
        for share in shares:
            for rep in range(reps):
                report = timing_run(out, f"bomb-{share}", bomb_config(share, period_us))
                timing = report.raw["timing"]
                rows.append({"hogs": hogs, "share": share, "rep": rep,
                             "slowdown": cachemodel.slowdown(report, solo, "victim"),
                             "guest_clock": timing["guest_clock"],
                             **{k: timing.get(key) for k, key in COUNTS.items()}})
    finally:
        for p in procs:
            p.kill()
            p.wait()
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| hogs | budget % | rep | slowdown | waits | timeouts | kicks | holds | hold timeouts | hold kicks |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        counts = " | ".join("-" if r[k] is None else str(r[k]) for k in COUNTS)
        lines.append(f"| {r['hogs']} | {r['share'] or 'none'} | {r['rep']} | {r['slowdown']:.4f} | {counts} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--hogs", type=int, nargs="+", default=[0, 4], help="busy host processes (default 0 4)")
    ap.add_argument("--shares", type=int, nargs="+", default=[0, 50, 5],
                    help="the bomb's budget in %% of its cycles, 0: unregulated (default 0 50 5)")
    ap.add_argument("--reps", type=int, default=1, help="runs per point (default 1)")
    ap.add_argument("--period-us", type=int, default=20, help="the budget's period (default 20)")
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "bench-timing-load")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON instead of a table")
    args = ap.parse_args(argv)
    if any(h < 0 for h in args.hogs) or any(not 0 <= s <= 100 for s in args.shares) or args.reps < 1:
        ap.error("--hogs must be >= 0, --shares 0-100, --reps >= 1")
    rows = [r for h in args.hogs for r in measure(args.out, h, args.shares, args.reps, args.period_us)]
    print(json.dumps(rows, indent=1) if args.json else table(rows), end="" if not args.json else "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
