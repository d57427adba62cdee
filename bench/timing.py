#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What timing mode costs: host wall-clock seconds per simulated second in
timing mode (`run --timing`), under `-icount 0` and in plain TCG (MTTCG, no
plugin), for 1, 2 and 4 vCPUs (docs/model.md "Timing mode").

Usage (after scripts/setup.sh; a few minutes on a loaded 2-core host):

    .venv/bin/python bench/timing.py [--vcpus 1 2 4] [--modes timing icount tcg]
                                     [--size 256K] [--iterations 4] [--reps 1]
                                     [--out build/bench-timing] [--json]

The workload is one VM running guests/bandwidth (sequential reads, `--size`
per vCPU, `--iterations` passes) on N vCPUs. Per mode and N:

- wall: host seconds of the whole QEMU run (boot included, build excluded;
  median of --reps);
- simulated: the measured phase's simulated time, the longest over the
  vCPUs: under -icount the guest's virtual counter (one ns per instruction);
  in timing mode the plugin's modelled time of the phase; in plain TCG the
  guest's counter, which is host time there (so its ratio is about 1 by
  construction, plus boot);
- wall per simulated second: wall / simulated (an upper bound: the boot's
  host time is in the numerator, not the denominator).

Host-time figures vary with the host's load; the simulated ones do not
(under -icount) or little (timing mode).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bulkhead.run import cachemodel, runner  # noqa: E402
from bulkhead.run.backend import RunOptions  # noqa: E402

MODES = ("timing", "icount", "tcg")
RESULT_NS = re.compile(r"^result bench=bandwidth cpu=\d+ .* ns=(\d+) ")


def config_text(ncpus: int, size: str, iterations: int) -> str:
    cpus = ", ".join(str(i) for i in range(ncpus))
    return f"""platform: qemu-virt
vms:
  - name: bench
    cpus: [{cpus}]
    memory:
      - {{ipa: 0x40000000, size: 16M}}
    guest: bandwidth
    params: {{mode: read, size: {size}, iterations: {iterations}}}
"""


def one(out: Path, mode: str, ncpus: int, size: str, iterations: int, reps: int) -> dict[str, Any]:
    """Wall and simulated seconds of one mode at ncpus vCPUs."""
    config = out / f"bench-{ncpus}.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(config_text(ncpus, size, iterations))
    build_out = out / f"{mode}-{ncpus}"
    timing = cachemodel.DEFAULT_QUANTUM_NS if mode == "timing" else None
    extra = cachemodel.TIMING_ACCEL if mode == "tcg" else []
    p = runner.prepare(config, RunOptions(timeout=None, icount=0 if mode == "icount" else None, out=build_out, timing=timing,
                       extra_qemu_args=tuple(extra), build_log=sys.stderr))
    walls: list[float] = []
    sims: list[float] = []
    for _ in range(reps):
        start = time.monotonic()
        status, timed_out, output = runner.supervise(p.argv, timeout=1800)
        walls.append(time.monotonic() - start)
        clean, reason = runner.judge(status, timed_out, output, p.nvms)
        if not clean:
            raise SystemExit(f"bench: {mode}, {ncpus} vCPUs: {reason}\n{output[-2000:]}")
        if mode == "timing":
            assert p.model_report is not None
            report = cachemodel.load_report(p.model_report)
            sims.append(max(c["phase_ps"] for c in report.raw["timing"]["cpus"]) / 1e12)
        else:
            ns = [int(m.group(1)) for line in output.splitlines()
                  if (m := RESULT_NS.match(line.partition("] ")[2]))]
            if len(ns) != ncpus:
                raise SystemExit(f"bench: {mode}, {ncpus} vCPUs: {len(ns)} result lines, expected {ncpus}")
            sims.append(max(ns) / 1e9)
    wall, sim = statistics.median(walls), statistics.median(sims)
    return {"mode": mode, "vcpus": ncpus, "wall_s": wall, "simulated_s": sim,
            "wall_per_simulated_s": wall / sim if sim > 0 else None}


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| mode | vCPUs | wall s | simulated s | wall s per simulated s |", "|---|---|---|---|---|"]
    for r in rows:
        ratio = r["wall_per_simulated_s"]
        lines.append(f"| {r['mode']} | {r['vcpus']} | {r['wall_s']:.2f} | {r['simulated_s']:.6f} | "
                     f"{'-' if ratio is None else f'{ratio:,.0f}'} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--vcpus", type=int, nargs="+", default=[1, 2, 4], choices=(1, 2, 3, 4))
    ap.add_argument("--modes", nargs="+", default=list(MODES), choices=MODES)
    ap.add_argument("--size", default="256K", help="bytes read per vCPU and pass (default 256K)")
    ap.add_argument("--iterations", type=int, default=4, help="passes (default 4)")
    ap.add_argument("--reps", type=int, default=1, help="runs per point, median (default 1)")
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "bench-timing")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON instead of a table")
    args = ap.parse_args(argv)
    if args.iterations < 1 or args.reps < 1:
        ap.error("--iterations and --reps must be >= 1")
    rows = [one(args.out, mode, n, args.size, args.iterations, args.reps) for n in args.vcpus for mode in args.modes]
    sys.stdout.write(json.dumps(rows, indent=2) + "\n" if args.json else table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
