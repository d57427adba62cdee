# SPDX-License-Identifier: Apache-2.0
"""Costs of run-time coloring in virtual time (bench/coloring.sh).

Boots tests/configs/color-recolor.yaml and tests/configs/color-ida.yaml
under ``-icount shift=0,align=off,sleep=off`` (1 ns of virtual time per
instruction, deterministic) and reports:

- recoloring: the victim's pause (the hypervisor's own figure, generic
  counter) and the manager's whole call, per MiB moved, for each of the
  four recolorings of the test: a disjoint set taken from the recolor pool
  (LLC 0-3 -> 4-7, pages go up), a smaller overlapping one (4-7 -> 4-5), a
  larger overlapping one (4-5 -> 4-7, pages go down onto the VM's own
  frames) and back onto the frames freed by the first (4-7 -> 0-3), each
  with the VM's stage-2 table pages; then the same for an uncolored VM
  (tests/configs/color-recolor-uncolored.yaml: its first recoloring splits
  its 2 MiB blocks into pages in new tables before moving);
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
from bulkhead.run.backend import RunOptions  # noqa: E402

CONFIGS = ROOT / "tests" / "configs"
OUT = ROOT / "build" / "bench" / "color-runtime"
RECOLOR_RE = re.compile(r"\[bulkhead\] recolor: vm victim: LLC (\S+) \(by mgr\): (\d+) of (\d+) pages moved "
                        r"\((\d+) up, (\d+) down\) and (\d+) stage-2 table pages in (\d+) us")
CALL_RE = re.compile(r"\[mgr\] recolor: manager: stage \d: LLC (0x[0-9a-f]+): (\d+) pages moved, call (\d+) us, "
                     r"pause (\d+) us")
IDA_RE = re.compile(r"\[(\w+)\] ida: full: (\d+) lines \((\d+) KiB\) in (\d+) sets, colors (0x[0-9a-f]+), "
                    r"(\d+) ns per KiB")


def boot(config: str) -> str:
    res = runner.run(CONFIGS / config, RunOptions(timeout=900, icount=0, out=OUT / Path(config).stem, build_log=sys.stderr))
    if not res.clean:
        sys.stderr.write(f"color_runtime: {config} failed: {res.reason}\n{res.output}")
        raise SystemExit(1)
    return res.output


def recolorings(config: str, what: str) -> None:
    out = boot(config)
    calls = CALL_RE.findall(out)
    for (llc, moved, total, up, down, tables, pause_us), (_, _, call_us, _) in zip(RECOLOR_RE.findall(out), calls,
                                                                                   strict=True):
        mib = int(moved) * 4096 / 2**20
        print(f"color_runtime: recolor {what} to LLC {llc:<4}: {moved}/{total} pages ({mib:.2f} MiB; {up:>4} up, "
              f"{down:>4} down) + {tables} table pages, pause {int(pause_us):>6} us = "
              f"{int(pause_us) / mib:6.0f} us/MiB; manager's call {int(call_us):>6} us")


def main() -> int:
    recolorings("color-recolor.yaml", "4 MiB VM")
    recolorings("color-recolor-uncolored.yaml", "4 MiB uncolored VM")
    out = boot("color-ida.yaml")
    for vm, lines, kib, sets, colors, ns_kib in IDA_RE.findall(out):
        print(f"color_runtime: IDA vm {vm:<4} colors {colors:<6}: {lines} lines ({kib} KiB) in {sets} sets: "
              f"{int(ns_kib)} ns per KiB ({int(ns_kib) * int(kib) / 1000:.0f} us per call)")
    print("color_runtime: virtual time, -icount shift=0 (1 instruction = 1 ns); QEMU models no caches or DRAM")
    return 0


if __name__ == "__main__":
    sys.exit(main())
