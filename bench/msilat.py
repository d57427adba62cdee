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
  injection");
- direct-vm: `qemu-virt` (GICv3) with the VM's `interrupts: direct`, booted
  through TF-A and U-Boot (the FIT in RAM) with SDEI, on CPU 1: the physical
  LPI is the guest's own and it takes it on the physical CPU interface, no
  hypervisor exit ("MSIs in a direct VM");
- native: the same guest ELF (the emulated run's) without a hypervisor, at
  EL1 on QEMU `virt,gic-version=3,highmem=off` with the edu at 00:01.0 and
  its parameters loaded where the guest runtime looks without a boot
  argument (the guest assigns the BAR and gives the ITS its tables).

The guest is guests/its (parameters edu=N, bench=1), alone on CPU 0 (the
direct VM: CPU 1) with the edu; "exits/MSI" are the CPU's exits over the samples
(BH_HC_CPU_EXITS) divided by them ("-" natively). Issue #41's target:
direct within 5% of native ("vs native").

QEMU models no caches, no DRAM and no pipeline: these are instruction
counts of the paths, not hardware latencies.

    python3 bench/msilat.py [--json] [--samples N]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
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
PATHS = (("emulated", "qemu-virt"), ("direct", "qemu-virt-gicv4"), ("direct-vm", "qemu-virt"))
# the direct-vm path's VM: direct interrupts (not on CPU 0), SDEI from TF-A
DIRECT_VM = ("sdei: true\n", "cpus: [1]\n    interrupts: direct\n")
RESULT_RE = re.compile(r"result bench=edumsi (.*)$")
EXITS_RE = re.compile(r"its: edu msis=(\d+) lpis=(\d+) exits=(\d+) irq_exits=(\d+)$")


def measure(path: str, platform: str, samples: int) -> dict[str, object]:
    """One boot of the guest on platform: its latency figures and exits."""
    text = VM.format(platform=platform, samples=samples)
    tfa = path == "direct-vm"
    if tfa:
        text = text.replace("vms:\n", DIRECT_VM[0] + "vms:\n").replace("cpus: [0]\n", DIRECT_VM[1])
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / f"msilat-{path}.yaml"
        config.write_text(text)
        with open("/dev/null", "w") as null:
            res = runner.run(config, RunOptions(timeout=600, icount=0, out=OUT / path, build_log=null,
                                                boot="tfa" if tfa else "image", fit_in_ram=tfa))
    lines = res.lines("msi")
    if not res.clean or "its: PASS (bench)" not in lines:
        raise SystemExit(f"bench/msilat.py: the {path} run failed: {res.reason}\n{res.output[-2000:]}")
    fig = figures(path, lines, samples)
    return {**fig, "platform": f"{platform}/tfa" if tfa else platform, "exits_per_msi": int(fig["exits"]) / samples}  # type: ignore[call-overload]


def figures(path: str, lines: list[str], samples: int) -> dict[str, object]:
    """The guest's latency line and MSI count, checked."""
    fig = next((dict(kv.split("=", 1) for kv in m.group(1).split()) for ln in lines if (m := RESULT_RE.match(ln))),
               None)
    got = next((tuple(map(int, m.groups())) for ln in lines if (m := EXITS_RE.match(ln))), None)
    if fig is None or got is None or got[:2] != (samples, samples):
        raise SystemExit(f"bench/msilat.py: {path}: no result or MSIs lost\n" + "\n".join(lines[-20:]))
    return {"path": path, "samples": samples, "min_ns": int(fig["min_ns"]), "mean_ns": float(fig["mean_ns"]),
            "max_ns": int(fig["max_ns"]), "exits": got[2]}


def native(samples: int) -> dict[str, object]:
    """The emulated run's guest ELF alone on QEMU, at EL1."""
    elf = OUT / "emulated" / "guests" / "its.elf"
    with tempfile.TemporaryDirectory() as tmp:
        params = Path(tmp) / "params.txt"
        params.write_text(f"vm=msi\ndevid=8\nedu={samples}\nbench=1\n")
        argv = ["qemu-system-aarch64", "-M", "virt,gic-version=3,highmem=off", "-cpu", "cortex-a53", "-m", "1G",
                "-nographic", "-nic", "none", "-monitor", "none", "-serial", "stdio",
                "-icount", "shift=0,align=off,sleep=off", "-kernel", str(elf), "-device", "edu,addr=01.0",
                "-device", f"loader,file={params},addr=0x40fff000"]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
    lines = [ln.strip() for ln in proc.stdout.splitlines()]
    if "its: PASS (bench)" not in lines:
        raise SystemExit(f"bench/msilat.py: the native run failed ({proc.returncode})\n{proc.stdout[-2000:]}")
    return {**figures("native", lines, samples), "platform": "bare QEMU", "exits_per_msi": None}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--samples", type=int, default=1000, help="MSIs per path")
    args = ap.parse_args(argv)
    if args.samples < 1:
        ap.error("--samples: at least 1")
    table = [measure(path, platform, args.samples) for path, platform in PATHS]
    table.append(native(args.samples))
    base = float(table[-1]["mean_ns"])  # type: ignore[arg-type]
    for t in table:
        t["vs_native"] = float(t["mean_ns"]) / base - 1  # type: ignore[arg-type]
    if args.json:
        json.dump(table, sys.stdout, indent=2)
        print()
        return 0
    print("edu MSI to the guest's handler, virtual time (-icount shift=0: 1 instruction = 1 ns)")
    print(f"{'path':<10} {'platform':<16} {'min':>7} {'mean':>9} {'max':>7} {'exits/MSI':>10} {'vs native':>10}")
    for t in table:
        exits = "-" if t["exits_per_msi"] is None else f"{t['exits_per_msi']:.2f}"
        print(f"{t['path']:<10} {t['platform']:<16} {t['min_ns']:>7} {t['mean_ns']:>9.1f} {t['max_ns']:>7} "
              f"{exits:>10} {t['vs_native']:>+9.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
