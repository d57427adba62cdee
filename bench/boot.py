# SPDX-License-Identifier: Apache-2.0
"""Boot benchmark (docs/boot.md, docs/performance.md "Boot"), for configs/dual.yaml.

- image build time: a full `bulkhead build` into a fresh directory (guests,
  payload, hypervisor, placed ELF, FIT), host wall-clock time;
- image sizes: payload, self-contained ELF, placed ELF, flat image, FIT;
- boot time to each VM's first guest instruction, in virtual time under
  `-icount shift=0,align=off,sleep=off` (1 instruction = 1 ns; the
  hypervisor logs `vm <name>: first guest instruction at <us> us`, generic
  counter since reset), for the three ways the system boots:
  - placed (what `bulkhead run` boots: QEMU's -kernel of
    hyp/bulkhead-placed.elf puts the payload in the staging window and the
    images of uncolored VMs where they run; nothing is moved or copied);
  - self-contained (QEMU's -kernel of hyp/bulkhead.elf, the same bytes as
    the flat bulkhead.bin a board's boot loader loads: the hypervisor moves
    the payload, checks every image's CRC-32 and copies the images into the
    VMs);
  - the U-Boot chain (`--boot uboot`: U-Boot's DHCP, TFTP of the FIT, bootm
    of the self-contained flat image);
- the boot's phases from the hypervisor's `boot phases` line (counter
  readings on the boot CPU) and each VM's first instruction: they add up to
  the last VM's first instruction, so nothing is left unaccounted.

QEMU models no caches or DRAM: virtual time counts instructions, not memory
behaviour; the figures compare boot paths on QEMU, not on hardware.
"""

from __future__ import annotations

import re
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bulkhead.generate import build  # noqa: E402
from bulkhead.layout.placement import System  # noqa: E402
from bulkhead.run import runner  # noqa: E402

CONFIG = ROOT / "configs" / "dual.yaml"
OUT = ROOT / "build" / "bench" / "boot"
FIRST_RE = re.compile(r"\[bulkhead\] vm (\S+): first guest instruction at (\d+) us")
MEMORY_RE = re.compile(r"\[bulkhead\] vm (\S+): memory set up in (\d+) us")
PHASES_RE = re.compile(
    r"\[bulkhead\] boot phases \(us since reset\): C entered (\d+), console and MMU (\d+), "
    r"GIC and DTB (\d+), images (\d+), VMs (\d+), interrupts and devices (\d+);")
PHASE_NAMES = (
    "reset to C (boot.S: entry checks, BSS zeroed)",
    "console, MMU, CPU and PMU set-up",
    "GIC and the DTB's RAM check",
    "boot images (placed: table checks only; else move + CRC-32)",
    "VMs (coloring, PCI, stage 2, image copies)",
    "interrupts, regulation, QoS, DSU, SMMUs, console input",
)
LAST = "other CPUs started, to the last VM's first instruction"


def until_last(system: System) -> str:
    """A pattern for the line that ends the boot: the first instruction of
    the VM on the boot CPU, which enters its vCPU after starting the others
    (any VM's when no VM runs on CPU 0)."""
    on_boot_cpu = [vm.name for vm in system.vms if 0 in vm.cpus]
    name = re.escape(on_boot_cpu[0]) if on_boot_cpu else r"\S+"
    return rf"vm {name}: first guest instruction at \d+ us"


def firsts(lines: list[str]) -> dict[str, int]:
    """Each VM's first guest instruction (virtual us since reset)."""
    out: dict[str, int] = {}
    for line in lines:
        if (m := FIRST_RE.match(line)) and m.group(1) not in out:
            out[m.group(1)] = int(m.group(2))
    return out


def phases(lines: list[str]) -> dict[str, int]:
    """The boot's phases in virtual us, in order: the boot CPU's six (from
    its `boot phases` line), then from starting the other CPUs to the last
    VM's first instruction; they add up to "first guest instruction" (the
    last VM's). Also, not part of the sum: "vm X memory and images" (inside
    the VMs phase) and "vm X started" (after the other CPUs were started).
    Empty when the lines hold no `boot phases` line."""
    stamps: list[int] = []
    for line in lines:
        if m := PHASES_RE.match(line):
            stamps = [int(g) for g in m.groups()]
            break
    first = firsts(lines)
    if not stamps or not first:
        return {}
    out = {name: t - (stamps[i - 1] if i else 0) for i, (name, t) in enumerate(zip(PHASE_NAMES, stamps, strict=True))}
    out[LAST] = max(first.values()) - stamps[-1]
    out["first guest instruction"] = max(first.values())
    for line in lines:
        if m := MEMORY_RE.match(line):
            out[f"vm {m.group(1)} memory and images"] = int(m.group(2))
    for vm, us in first.items():
        out[f"vm {vm} started"] = us - stamps[-1]
    return out


def boot_run(argv: list[str], pattern: str) -> list[str]:
    status, timed_out, output = runner.supervise(argv, timeout=600, until=re.compile(pattern))
    lines = output.splitlines()
    if not firsts(lines):
        raise SystemExit(f"bench/boot.py: no 'first guest instruction' line (status {status}, "
                         f"timed out {timed_out}):\n{output[-2000:]}")
    return lines


def main() -> int:
    shutil.rmtree(OUT, ignore_errors=True)
    t0 = time.monotonic()
    result = build.build(CONFIG, OUT, log=sys.stderr)
    build_s = time.monotonic() - t0
    sizes = {
        "payload.bin": result.payload.stat().st_size,
        "bulkhead.elf (self-contained)": result.elf.stat().st_size,
        "bulkhead-placed.elf": result.placed_elf.stat().st_size,
        "bulkhead.bin (flat, self-contained)": result.elf.with_suffix(".bin").stat().st_size,
        "bulkhead.itb": result.itb.stat().st_size,
    }
    pattern = until_last(result.system)
    argv = [*result.qemu_argv, "-icount", "shift=0,align=off,sleep=off"]
    placed = boot_run(argv, pattern)
    self_contained = boot_run([str(result.elf) if a == str(result.placed_elf) else a for a in argv], pattern)
    uboot = runner.run(CONFIG, timeout=600, icount=0, out=OUT, boot="uboot", until=pattern,
                       build_log=sys.stderr)
    uboot_first = firsts(uboot.all_lines())
    if not uboot_first:
        raise SystemExit(f"bench/boot.py: the U-Boot run reached no guest: {uboot.reason}")
    print(f"config {CONFIG.relative_to(ROOT)}")
    print(f"build (fresh, host time): {build_s:.2f} s")
    for name, size in sizes.items():
        print(f"size {name}: {size} bytes ({size / (1 << 20):.1f} MiB)")
    print("boot phases, placed (virtual us at -icount shift=0; QEMU models no caches/DRAM):")
    for name, us in phases(placed).items():
        print(f"  {name}: {us}")
    print("boot phases, self-contained:")
    for name, us in phases(self_contained).items():
        print(f"  {name}: {us}")
    rows = (("placed ELF (QEMU -kernel, what `bulkhead run` boots)", firsts(placed)),
            ("self-contained ELF / flat image (payload moved, CRC-32, copied)", firsts(self_contained)),
            ("U-Boot chain (DHCP, TFTP of the FIT, bootm of the flat image)", uboot_first))
    print("first guest instruction per VM (virtual us since reset):")
    for label, first in rows:
        print(f"  {label}: " + ", ".join(f"{vm} {us}" for vm, us in first.items())
              + f"; last {max(first.values())}")
    last = [max(first.values()) for _, first in rows]
    print(f"  ratio self-contained / placed: {last[1] / last[0]:.0f}")
    print(f"  ratio U-Boot / self-contained: {last[2] / last[1]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
