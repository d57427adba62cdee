# SPDX-License-Identifier: Apache-2.0
"""Size of the hypervisor's code (issue #26 item 5): `.text` of the
hypervisor built for a config (configs/dual.yaml by default: QEMU virt,
GICv3, no QoS-400), the largest objects, and with ``--check`` a non-zero
exit when `.text` is above the budget recorded in bench/budgets.toml.

What is built is chosen at compile time from the platform (hypervisor/
Makefile: the other GIC version's virtual front end and QoS-400 without
regulators are left out) and cold files are built with -Os (COLD in the
Makefile); the hot paths keep -O2 (bench/hotpaths.py).

    python3 bench/size.py [--config FILE] [--out DIR] [--check] [--json] [--top N]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bulkhead.generate import build  # noqa: E402

BUDGETS = ROOT / "bench" / "budgets.toml"
SIZE = "aarch64-linux-gnu-size"


def budget() -> tuple[Path, int]:
    """(config, .text budget in bytes) from bench/budgets.toml."""
    doc = tomllib.loads(BUDGETS.read_text())
    return ROOT / doc["size"]["config"], int(doc["size"]["text_bytes"])


def text_sizes(path: Path) -> dict[str, int]:
    """Section name -> size of every .text* section of an ELF or object."""
    out = subprocess.run([SIZE, "-A", str(path)], capture_output=True, text=True, check=True).stdout
    sizes: dict[str, int] = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].startswith(".text") and parts[1].isdigit():
            sizes[parts[0]] = sizes.get(parts[0], 0) + int(parts[1])
    return sizes


def measure(config: Path, out: Path) -> tuple[int, list[tuple[str, int]]]:
    """(.text of the linked hypervisor, [(object, .text)] largest first)."""
    with open("/dev/null", "w") as null:
        res = build.build(config, out, log=null)
    total = text_sizes(res.elf).get(".text", 0)
    objs = [(str(o.relative_to(out / "hyp" / "obj")), sum(text_sizes(o).values()))
            for o in sorted((out / "hyp" / "obj").rglob("*.o"))]
    objs.sort(key=lambda t: -t[1])
    return total, objs


def main(argv: list[str] | None = None) -> int:
    cfg, limit = budget()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", type=Path, default=cfg, help=f"default: {cfg.relative_to(ROOT)}")
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "bench" / "size")
    ap.add_argument("--check", action="store_true",
                    help=f"exit 1 when .text is above the budget ({limit} bytes, bench/budgets.toml)")
    ap.add_argument("--budget", type=int, default=limit, help="override the recorded budget (bytes)")
    ap.add_argument("--top", type=int, default=10, help="largest objects to list")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    total, objs = measure(args.config, args.out)
    over = total > args.budget
    if args.json:
        json.dump({"config": str(args.config), "text_bytes": total, "budget_bytes": args.budget,
                   "objects": dict(objs)}, sys.stdout, indent=2)
        print()
    else:
        print(f"hypervisor .text for {args.config.name}: {total} bytes ({total / 1000:.1f} KB); "
              f"budget {args.budget} bytes")
        for name, size in objs[:args.top]:
            print(f"  {size:>7}  {name}")
    if args.check and over:
        print(f"bench/size.py: .text is {total} bytes, above the budget of {args.budget} bytes "
              f"(bench/budgets.toml)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
