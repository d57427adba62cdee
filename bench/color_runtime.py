# SPDX-License-Identifier: Apache-2.0
"""Costs of run-time coloring in virtual time (bench/coloring.sh).

Boots tests/configs/color-recolor.yaml and tests/configs/color-ida.yaml
under ``-icount shift=0,align=off,sleep=off`` (1 ns of virtual time per
instruction, deterministic) and reports:

- recoloring: the victim's pause (the hypervisor's own figure, generic
  counter) and the manager's whole call, per MiB moved, for a disjoint set
  (LLC 0-3 -> 4-7) and an overlapping smaller one moved in place (4-7 ->
  4-5);
- IDA: BH_HC_IDA_PREPARE time per prepared KiB (the guest's best of its
  repetitions), a quarter of the 1 MiB L2.

QEMU models no caches and no DRAM: copying and DC CISW cost what QEMU's
emulation of them costs in instructions, not what they cost on hardware.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bulkhead.run import runner  # noqa: E402

CONFIGS = ROOT / "tests" / "configs"
OUT = ROOT / "build" / "bench" / "color-runtime"
RECOLOR_RE = re.compile(r"\[bulkhead\] recolor: vm victim: LLC (\S+) \(by mgr\): (\d+) of (\d+) pages moved in (\d+) us")
CALL_RE = re.compile(r"\[mgr\] recolor: manager: stage \d: LLC (0x[0-9a-f]+): (\d+) pages moved, call (\d+) us, "
                     r"pause (\d+) us")
IDA_RE = re.compile(r"\[(\w+)\] ida: full: (\d+) lines \((\d+) KiB\) in (\d+) sets, colors (0x[0-9a-f]+), "
                    r"(\d+) ns per KiB")


def boot(config: str) -> str:
    res = runner.run(CONFIGS / config, timeout=900, icount=0, out=OUT / Path(config).stem, build_log=sys.stderr)
    if not res.clean:
        sys.stderr.write(f"color_runtime: {config} failed: {res.reason}\n{res.output}")
        raise SystemExit(1)
    return res.output


def main() -> int:
    out = boot("color-recolor.yaml")
    calls = CALL_RE.findall(out)
    for (llc, moved, total, pause_us), (_, _, call_us, _) in zip(RECOLOR_RE.findall(out), calls, strict=True):
        mib = int(moved) * 4096 / 2**20
        print(f"color_runtime: recolor 4 MiB VM to LLC {llc:<4}: {moved}/{total} pages ({mib:.2f} MiB) moved, "
              f"pause {int(pause_us):>7} us = {int(pause_us) / mib:8.0f} us/MiB; "
              f"manager's call {int(call_us):>7} us")
    out = boot("color-ida.yaml")
    for vm, lines, kib, sets, colors, ns_kib in IDA_RE.findall(out):
        print(f"color_runtime: IDA vm {vm:<4} colors {colors:<6}: {lines} lines ({kib} KiB) in {sets} sets: "
              f"{int(ns_kib)} ns per KiB ({int(ns_kib) * int(kib) / 1000:.0f} us per call)")
    print("color_runtime: virtual time, -icount shift=0 (1 instruction = 1 ns); QEMU models no caches or DRAM")
    return 0


if __name__ == "__main__":
    sys.exit(main())
