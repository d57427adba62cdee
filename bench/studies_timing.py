#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The five studies' specs in timing mode (issue #37, item 6), reduced.

Usage (after scripts/setup.sh; about half an hour on a loaded 2-core host):

    .venv/bin/python bench/studies_timing.py [--study NAME]... [--quantum NS]
                                             [--out build/studies-timing]

Each study's spec (bench/experiments/<name>.yaml) is reduced
(bulkhead/experiment/reduced.py: the benchmarks, scenarios, sweep values and
passes of :data:`STUDIES`) and run once with ``bulkhead experiment --timing``
into ``OUT/<name>/`` (report.md, agreement.csv). Reduced because timing mode
with 4 vCPU threads on 2 host cores costs about 40x the wall time of 2
(docs/model.md "Cost") and rk3588-linear's VM has 8. Then ``OUT/summary.md``
lists, per study, every published value against Bulkhead's (the reports'
"Published against Bulkhead" rows) and the runs' statuses. docs/experiments.md
("In timing mode") quotes one such run.
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bulkhead.experiment.reduced import reduce_spec  # noqa: E402

# name: (benchmarks, parameters over theirs, scenarios, sweep values picked per scenario (indices))
STUDIES: dict[str, tuple[list[str], dict[str, Any], list[str], dict[str, list[int]]]] = {
    "rtas19": (["seq-iter", "rand-iter"], {"iterations": 256},
               ["base", "ida", "interf", "col-interf", "ida-col-interf"], {}),
    "hmbr": (["bw-read"], {"iterations": 64}, ["solo", "interf", "interf-period", "self-period"],
             {"interf-period": [0, 6], "self-period": [0, 1, 3]}),
    "clare": (["echo"], {"frames": 100}, ["c1", "c2", "c3", "c4"], {}),
    "bao-thesis": (["latency"], {"iterations": 64}, ["solo", "interf", "interf-col", "interf-mbr"],
                   {"interf-mbr": [0]}),
    "rk3588-linear": (["bw-read"], {"iterations": 16}, ["unregulated", "one-a76"], {"one-a76": [0, 3]}),
}


def run_study(name: str, out: Path, quantum: int | None) -> Path:
    benches, params, scenarios, pick = STUDIES[name]
    doc = yaml.safe_load((ROOT / "bench" / "experiments" / f"{name}.yaml").read_text())
    reduced = reduce_spec(doc, benches, params, scenarios, pick=pick)
    reduced["repetitions"] = 1
    out.mkdir(parents=True, exist_ok=True)
    spec = out / f"{name}-timing.yaml"
    spec.write_text(f"# {name}.yaml reduced by bench/studies_timing.py for timing mode\n"
                    + yaml.safe_dump(reduced, sort_keys=False, width=100))
    argv = [sys.executable, "-m", "bulkhead", "experiment", str(spec), "--out", str(out / name), "--timing"]
    argv += [a for s in scenarios for a in ("--only", s)]
    if quantum is not None:
        argv += ["--quantum", str(quantum)]
    subprocess.run(argv, cwd=ROOT, check=False)
    return out / name


def summary(results: dict[str, Path]) -> str:
    md = ["# The five studies in timing mode (bench/studies_timing.py)\n"]
    for name, path in results.items():
        md.append(f"## {name}\n")
        rows = list(csv.DictReader(open(path / "results.csv", newline=""))) if (path / "results.csv").is_file() \
            else []
        status: dict[str, int] = {}
        for r in rows:
            key = r["status"] + (" (flagged)" if r.get("flags") else "")
            status[key] = status.get(key, 0) + 1
        md.append("runs: " + (", ".join(f"{n} {k}" for k, n in status.items()) or "none") + "\n")
        for r in rows:
            md.append(f"- {r['scenario']}{'[' + r['variant'] + ']' if r['variant'] else ''} {r['benchmark']}: "
                      f"{r['status']} {r['value']} {r['unit']}" + (f" flags: {r['flags'][:120]}" if r["flags"] else ""))
        agree = path / "agreement.csv"
        if not agree.is_file():
            md.append("\nno published values in the spec's figures\n")
            continue
        md.append("\n| figure | at | benchmark | published | Bulkhead | difference | verdict |\n|---|---|---|---|---|---|---|")
        for a in csv.DictReader(open(agree, newline="")):
            diff = f"{float(a['difference']):+.1%}" if a["difference"] else "–"
            md.append(f"| {a['figure']} | {a['at']} | {a['benchmark']} | {a['published']} | {a['bulkhead'] or '–'} "
                      f"| {diff} | {a['verdict']}" + (f": {a['why']}" if a["why"] else "") + " |")
        md.append("")
    return "\n".join(md) + "\n"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--study", action="append", choices=sorted(STUDIES), help="run only this study (repeatable)")
    p.add_argument("--quantum", metavar="NS", type=int, help="the lock-step quantum (default: run --timing's)")
    p.add_argument("--out", type=Path, default=ROOT / "build" / "studies-timing")
    p.add_argument("--summary-only", action="store_true", help="only rewrite OUT/summary.md from OUT's runs")
    args = p.parse_args()
    out = args.out.absolute()
    names = args.study or list(STUDIES)
    results = {n: out / n if args.summary_only else run_study(n, out, args.quantum) for n in names}
    (out / "summary.md").write_text(summary(results))
    sys.stdout.write(f"{out / 'summary.md'}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
