# SPDX-License-Identifier: Apache-2.0
"""Boot benchmark of the single image (docs/boot.md), for configs/dual.yaml.

- image build time: a full `bulkhead build` into a fresh directory (guests,
  payload, hypervisor, FIT), host wall-clock time;
- image sizes: payload, ELF, flat image, FIT;
- boot time to the first guest instruction, in virtual time under
  `-icount shift=0,align=off,sleep=off` (the hypervisor logs
  `vm <name>: first guest instruction at <us> us`, generic counter since
  reset), for the single image booted by QEMU's -kernel and for the U-Boot
  chain (`--boot uboot`: U-Boot's DHCP, TFTP of the FIT, bootm), and their
  ratio. The loader-staged boot (QEMU's loader put each image in the staging
  window; no payload move, no CRC) no longer exists: its figure is derived
  from the single-image run as the first guest instruction less the time the
  hypervisor logs for moving and checking the payload (`boot images: ... in
  N us`), which is the only work the single image adds before the VMs start.

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
from bulkhead.run import runner  # noqa: E402

CONFIG = ROOT / "configs" / "dual.yaml"
OUT = ROOT / "build" / "bench" / "boot"
FIRST_RE = re.compile(r"\[bulkhead\] vm (\S+): first guest instruction at (\d+) us")
INSTALL_RE = re.compile(r"\[bulkhead\] boot images: .* in (\d+) us")
MEMORY_RE = re.compile(r"\[bulkhead\] vm (\S+): memory set up in (\d+) us")
# the run can end at the first guest instruction (the phases are all before it)
UNTIL_FIRST = r"first guest instruction at \d+ us"


def phases(lines: list[str]) -> dict[str, int]:
    """Boot phases in virtual us from the hypervisor's log: the payload move
    and check, each VM's memory set-up (stage 2 and its images), the rest
    (console, MMU, GIC, per-CPU set-up, secondary CPUs) and the first guest
    instruction (generic counter since reset)."""
    out: dict[str, int] = {}
    for line in lines:
        if m := INSTALL_RE.match(line):
            out["payload move + CRC"] = int(m.group(1))
        elif m := MEMORY_RE.match(line):
            out[f"vm {m.group(1)} memory and images"] = int(m.group(2))
        elif (m := FIRST_RE.match(line)) and "first guest instruction" not in out:
            out["first guest instruction"] = int(m.group(2))
    if "first guest instruction" in out:
        out["other (unaccounted by the log)"] = out["first guest instruction"] - sum(
            v for k, v in out.items() if k != "first guest instruction")
    return out


def first_guest_us(boot: str) -> tuple[int, int]:
    """(first guest instruction, payload move + check), in virtual us."""
    res = runner.run(CONFIG, timeout=600, icount=0, out=OUT, boot=boot, build_log=sys.stderr)
    if not res.clean:
        raise SystemExit(f"bench/boot.py: the {boot} run was not clean: {res.reason}")
    times = [int(m.group(2)) for m in map(FIRST_RE.match, res.all_lines()) if m]
    if not times:
        raise SystemExit(f"bench/boot.py: no 'first guest instruction' line in the {boot} run")
    installs = [int(m.group(1)) for m in map(INSTALL_RE.match, res.all_lines()) if m]
    if not installs:
        raise SystemExit(f"bench/boot.py: no 'boot images: ... in N us' line in the {boot} run")
    return min(times), installs[0]


def main() -> int:
    shutil.rmtree(OUT, ignore_errors=True)
    t0 = time.monotonic()
    result = build.build(CONFIG, OUT, log=sys.stderr)
    build_s = time.monotonic() - t0
    sizes = {
        "payload.bin": result.payload.stat().st_size,
        "bulkhead.elf": result.elf.stat().st_size,
        "bulkhead.bin": result.elf.with_suffix(".bin").stat().st_size,
        "bulkhead.itb": result.itb.stat().st_size,
    }
    image_us, install_us = first_guest_us("image")
    uboot_us, _ = first_guest_us("uboot")
    staged_us = image_us - install_us
    print(f"config {CONFIG.relative_to(ROOT)}")
    print(f"build (fresh, host time): {build_s:.2f} s")
    for name, size in sizes.items():
        print(f"size {name}: {size} bytes ({size / (1 << 20):.1f} MiB)")
    res = runner.run(CONFIG, timeout=600, icount=0, out=OUT, until=UNTIL_FIRST, build_log=sys.stderr)
    print("boot phases of the single image (virtual time, -icount shift=0):")
    for name, us in phases(res.all_lines()).items():
        print(f"  {name}: {us} us")
    print("first guest instruction (virtual time, -icount shift=0; QEMU models no caches/DRAM):")
    print(f"  single image (QEMU -kernel): {image_us} us")
    print(f"  U-Boot chain (FIT over TFTP): {uboot_us} us")
    print(f"  loader-staged (derived: single image less its {install_us} us payload move + CRC): {staged_us} us")
    print(f"  ratio single image / loader-staged: {image_us / staged_us:.2f}")
    print(f"  ratio U-Boot / single image: {uboot_us / image_us:.1f}")
    print(f"  ratio U-Boot / loader-staged: {uboot_us / staged_us:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
