# SPDX-License-Identifier: Apache-2.0
"""DMA throughput and hypervisor exits per DMA through a passed-through PCI
function (issue #25, docs/dma.md): guests/edudma in bench mode drives QEMU's
`edu` DMA engine (4 KiB transfers, RAM -> edu -> RAM alternating, completion
polled through its BAR, which stage 2 maps: no trap) in one run per mode,
under `-icount shift=0,align=off,sleep=off` (1 instruction = 1 ns of
virtual time):

- bypass: `dma_isolation: none`, the device given physical addresses
  (BH_HC_IPA_INFO), nothing between it and memory;
- smmu: the device behind the SMMU, given IPAs, translated through the VM's
  stage 2 (only where the platform has SMMU support; otherwise skipped).

It prints bytes per virtual second of each mode, their ratio, and the
hypervisor exits of the VM's CPU during the transfers (BH_HC_CPU_EXITS
before and after, less the second call's own exit) per DMA.

QEMU models no IOTLB, no walk caches and no bus: edu finishes a transfer a
fixed 100 ms of virtual time after it starts (hw/misc/edu.c, dma_timer),
whatever the translation costs, so the ratio can only show added work on
the CPU's side (exits), never translation latency.

    python3 bench/edudma.py [--count N] [--json]
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

from bulkhead.layout.load import load_platform  # noqa: E402
from bulkhead.run import runner  # noqa: E402
from bulkhead.run.backend import RunOptions  # noqa: E402

OUT = ROOT / "build" / "bench" / "edudma"
CONFIG = """platform: qemu-virt
{isolation}vms:
  - name: b
    cpus: [0]
    memory:
      - {{ipa: 0x40000000, size: 2M}}
    guest: edudma
    introspection: true
    pci: [{{qemu: edu}}]
    params: {{mode: bench, dma: {dma}, count: {count}, bytes: 4096}}
"""
RESULT_RE = re.compile(r"result bench=edudma (.*)$")


def one(mode: str, count: int) -> dict[str, int]:
    isolation, dma = ("dma_isolation: none\n", "pa") if mode == "bypass" else ("", "ipa")
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / f"edudma-{mode}.yaml"
        config.write_text(CONFIG.format(isolation=isolation, dma=dma, count=count))
        res = runner.run(config, RunOptions(timeout=900, icount=0, out=OUT / mode, build_log=open("/dev/null", "w")))
    if not res.clean:
        raise SystemExit(f"bench/edudma.py: the {mode} run was not clean: {res.reason}")
    for line in res.lines("b"):
        m = RESULT_RE.match(line)
        if m:
            return {k: int(v) for k, v in (kv.split("=", 1) for kv in m.group(1).split())}
    raise SystemExit(f"bench/edudma.py: no result line in the {mode} run")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=8, help="transfers per run (default 8)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    modes = ["bypass"]
    if load_platform("qemu-virt").smmu:
        modes.append("smmu")
    rows = {mode: one(mode, args.count) for mode in modes}
    table = {mode: {"transfers": r["transfers"], "bytes": r["bytes"], "virtual_ns": r["ns"],
                    "bytes_per_s": r["bytes"] * 10**9 / r["ns"], "exits": r["exits"],
                    "exits_per_dma": r["exits"] / r["transfers"]} for mode, r in rows.items()}
    ratio = (table["smmu"]["bytes_per_s"] / table["bypass"]["bytes_per_s"]) if "smmu" in table else None
    if args.json:
        json.dump({"modes": table, "smmu_over_bypass": ratio}, sys.stdout, indent=2)
        print()
        return 0
    print("edu DMA, virtual time (-icount shift=0; QEMU models no IOTLB timing: edu takes 100 ms per transfer)")
    print(f"{'mode':<8} {'transfers':>9} {'bytes':>8} {'virtual ms':>11} {'bytes/s':>9} {'exits':>6} {'exits/DMA':>9}")
    for mode, t in table.items():
        print(f"{mode:<8} {t['transfers']:>9} {t['bytes']:>8} {t['virtual_ns'] / 1e6:>11.1f} "
              f"{t['bytes_per_s']:>9.0f} {t['exits']:>6} {t['exits_per_dma']:>9.2f}")
    print(f"smmu / bypass throughput: {ratio:.4f}" if ratio is not None
          else "smmu: skipped (platform qemu-virt has no SMMU support in this tree)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
