# SPDX-License-Identifier: Apache-2.0
"""MSI delivery latency (issue #41 item 6): a passthrough `edu`'s own MSI,
from the guest's write that raises it to the guest's handler, in virtual
time under `-icount shift=0,align=off,sleep=off` (one instruction at any
exception level is 1 ns), the vCPU waiting in WFI with interrupts masked.

- emulated: `qemu-virt` (GICv3): the physical LPI exits to the hypervisor,
  which puts the VM's LPI in a list register (docs/interrupts.md
  "Message-signalled interrupts");
- direct: `qemu-virt-gicv4` (GICv4.0): the event is a vLPI of the vCPU's
  resident vPE, delivered with no hypervisor exit ("GICv4 direct
  injection").

The guest is guests/its (parameters edu=N, bench=1), alone on CPU 0 with
the edu; "exits/MSI" are the CPU's exits over the samples
(BH_HC_CPU_EXITS) divided by them. The same guest without a hypervisor
(issue #41's "native" reference) is not measured yet: guests/its needs the
hypervisor's device tree, hypercalls and BAR assignment.

QEMU models no caches, no DRAM and no pipeline: these are instruction
counts of the paths, not hardware latencies.

    python3 bench/msilat.py [--json] [--samples N]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bulkhead.run import runner  # noqa: E402
from bulkhead.run.backend import RunOptions  # noqa: E402

OUT = ROOT / "build" / "bench" / "msilat"
VM = """platform: {platform}
vms:
  - name: msi
    cpus: [0]
    memory: [{{ipa: 0x40000000, size: 16M}}]
    guest: its
    pci: [{{qemu: edu}}]
    params: {{devid: 8, edu: {samples}, bench: 1}}
"""
PATHS = (("emulated", "qemu-virt"), ("direct", "qemu-virt-gicv4"))
RESULT_RE = re.compile(r"result bench=edumsi (.*)$")
EXITS_RE = re.compile(r"its: edu msis=(\d+) lpis=(\d+) exits=(\d+) irq_exits=(\d+)$")


def measure(path: str, platform: str, samples: int) -> dict[str, object]:
    """One boot of the guest on platform: its latency figures and exits."""
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / f"msilat-{path}.yaml"
        config.write_text(VM.format(platform=platform, samples=samples))
        with open("/dev/null", "w") as null:
            res = runner.run(config, RunOptions(timeout=600, icount=0, out=OUT / path, build_log=null))
    lines = res.lines("msi")
    if not res.clean or "its: PASS (bench)" not in lines:
        raise SystemExit(f"bench/msilat.py: the {path} run failed: {res.reason}\n{res.output[-2000:]}")
    fig = next(dict(kv.split("=", 1) for kv in m.group(1).split()) for ln in lines if (m := RESULT_RE.match(ln)))
    msis, lpis, exits, _ = next(tuple(map(int, m.groups())) for ln in lines if (m := EXITS_RE.match(ln)))
    if msis != samples or lpis != samples:
        raise SystemExit(f"bench/msilat.py: {path}: {lpis} of {msis} MSIs arrived")
    return {"path": path, "platform": platform, "samples": samples, "min_ns": int(fig["min_ns"]),
            "mean_ns": float(fig["mean_ns"]), "max_ns": int(fig["max_ns"]), "exits_per_msi": exits / samples}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--samples", type=int, default=1000, help="MSIs per path")
    args = ap.parse_args(argv)
    if args.samples < 1:
        ap.error("--samples: at least 1")
    table = [measure(path, platform, args.samples) for path, platform in PATHS]
    if args.json:
        json.dump(table, sys.stdout, indent=2)
        print()
        return 0
    print("edu MSI to the guest's handler, virtual time (-icount shift=0: 1 instruction = 1 ns)")
    print(f"{'path':<10} {'platform':<16} {'min':>7} {'mean':>9} {'max':>7} {'exits/MSI':>10}")
    for t in table:
        print(f"{t['path']:<10} {t['platform']:<16} {t['min_ns']:>7} {t['mean_ns']:>9.1f} {t['max_ns']:>7} "
              f"{t['exits_per_msi']:>10.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
