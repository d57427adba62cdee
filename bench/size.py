# SPDX-License-Identifier: Apache-2.0
"""Size of the hypervisor's code (issue #26 item 5): `.text` of the
hypervisor built for a config (configs/dual.yaml by default: QEMU virt,
GICv3, SMMUv3, no regulation, recoloring, IDA, PCIe or QoS-400), what each
object contributes to the linked image (the link map: what
--gc-sections kept), and with ``--check`` a non-zero exit when `.text` is
above the budget recorded in bench/budgets.toml.

What is built is chosen at compile time (hypervisor/Makefile): the
platform's drivers (GIC version and its virtual front end, UART, the SMMUs
the configuration drives, QoS-400 with regulators) and the mechanisms the
configuration uses (bulkhead/generate/features.py features(): the regulator,
recoloring, IDA, PCIe passthrough, DSU partitions). ``--all-features``
builds the same config with every switch on, as the hypervisor was before
the selection. Cold files are built with -Os (COLD in the Makefile); the
hot paths keep -O2 (bench/hotpaths.py). docs/performance.md "Size budget".

    python3 bench/size.py [--config FILE] [--all-features] [--out DIR] [--check] [--json] [--top N]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bulkhead.base.tree import HYPERVISOR_DIR  # noqa: E402
from bulkhead.generate import build, features  # noqa: E402
from bulkhead.layout.placement import System  # noqa: E402

BUDGETS = ROOT / "bench" / "budgets.toml"
SIZE = "aarch64-linux-gnu-size"


def budget() -> tuple[Path, int]:
    """(config, .text budget in bytes) from bench/budgets.toml."""
    doc = tomllib.loads(BUDGETS.read_text())
    return ROOT / doc["size"]["config"], int(doc["size"]["text_bytes"])


def text_size(elf: Path) -> int:
    """Size of the .text section of an ELF."""
    out = subprocess.run([SIZE, "-A", str(elf)], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] == ".text" and parts[1].isdigit():
            return int(parts[1])
    raise ValueError(f"{elf}: no .text section")


_INPUT = re.compile(r"^ (\.text\S*)?\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+(\S+\.o\)?)$")


def linked_objects(map_file: Path, *obj_dirs: Path) -> list[tuple[str, int]]:
    """[(object, bytes of .text it contributes)], largest first, from the
    linker map of the output section .text (alignment padding excluded);
    objects are named relative to the first of ``obj_dirs`` they are in."""
    sizes: dict[str, int] = {}
    inside = False
    for line in map_file.read_text().splitlines():
        if line.startswith(".text "):
            inside = True
            continue
        if inside and re.match(r"^\.\S", line):
            break
        m = _INPUT.match(line) if inside else None
        if m and (line.startswith(" .text") or m.group(1) is None):
            name = m.group(3)
            prefix = next((f"{d}/" for d in obj_dirs if name.startswith(f"{d}/")), None)
            name = name[len(prefix):] if prefix else Path(name).name
            sizes[name] = sizes.get(name, 0) + int(m.group(2), 16)
    return sorted(((k, v) for k, v in sizes.items() if v), key=lambda t: (-t[1], t[0]))


def every_feature(system: System) -> dict[str, bool]:
    """Every mechanism (the ITS and GICv4 tables on GICv3), direct mode as configured, the
    platform's SMMU drivers (features.contents' names)."""
    chosen = features.features(system)
    smmus = {u.type.replace("-", "").upper() for u in system.platform.smmus}
    return {k: k in smmus if k not in chosen else chosen[k] if k == "DIRECT"
            else k != "ITS" and k != "GICV4" or system.platform.gic.version == 3 for k in features.contents(system)}


def measure(config: Path, out: Path, all_features: bool = False) -> tuple[int, list[tuple[str, int]]]:
    """(.text of the linked hypervisor, [(object, .text in the link)] largest first)."""
    with open("/dev/null", "w") as null:
        res = build.build(config, out, log=null)
    hyp = out / "hyp"
    elf = res.elf
    if all_features:
        hyp = out / "hyp-all"
        fragment = build.write_features(out / "all-features", every_feature(res.system), "bench/size.py")
        args = [a for a in build.hypervisor_make_args(res.system, out) if not a.startswith(("O=", "FEATURES_MK="))]
        args += [f"O={hyp}", f"FEATURES_MK={fragment}"]
        subprocess.run(["make", "-s", "--no-print-directory", "-C", str(HYPERVISOR_DIR), *args],
                       check=True, stdout=subprocess.DEVNULL)
        elf = hyp / build.ELF_NAME
    return text_size(elf), linked_objects(hyp / "bulkhead.map", res.objects if hyp == out / "hyp" else hyp / "obj",
                                          hyp / "obj")


def main(argv: list[str] | None = None) -> int:
    cfg, limit = budget()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", type=Path, default=cfg, help=f"default: {cfg.relative_to(ROOT)}")
    ap.add_argument("--all-features", action="store_true",
                    help="build with every mechanism on (the ITS on GICv3; direct mode as configured) and "
                         "every SMMU driver of the platform")
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "bench" / "size")
    ap.add_argument("--check", action="store_true",
                    help=f"exit 1 when .text is above the budget ({limit} bytes, bench/budgets.toml)")
    ap.add_argument("--budget", type=int, default=limit, help="override the recorded budget (bytes)")
    ap.add_argument("--top", type=int, default=10, help="largest objects to list")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    total, objs = measure(args.config, args.out, args.all_features)
    over = total > args.budget
    if args.json:
        json.dump({"config": str(args.config), "all_features": args.all_features, "text_bytes": total,
                   "budget_bytes": args.budget, "objects": dict(objs)}, sys.stdout, indent=2)
        print()
    else:
        what = " (every feature built)" if args.all_features else ""
        print(f"hypervisor .text for {args.config.name}{what}: {total} bytes ({total / 1024:.1f} KiB); "
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
