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
  ratio; with `--boot tfa` the full firmware chain instead or as well
  (`bench/boot.py --boot uboot --boot tfa`): TF-A's BL1, BL2 and BL31 at
  EL3 on `secure=on`, then the same U-Boot chain (docs/firmware.md); the
  firmware's share is the chain's first guest instruction less the single
  image's. TF-A's own share (reset to BL33 entry: BL1, BL2, BL31) is measured
  apart, deterministically: the firmware probe (tools/fwprobe) as BL33 in
  a copy of the FIP prints the generic counter at its first instruction,
  and the cost of an SDEI dispatch of a bound interrupt (its timer's expiry
  to the handler, the handler's SDEI_EVENT_COMPLETE to the interrupted code).
  U-Boot's part is not deterministic under -icount: while it waits for
  QEMU's user-mode network (DHCP, TFTP), whose answers come in host time, it
  runs a host-dependent number of instructions (its autoboot countdown is
  off: bootdelay=0 in its environment, docs/boot.md). The loader-staged boot (QEMU's loader put each image in the staging
  window; no payload move, no CRC) no longer exists: its figure is derived
  from the single-image run as the first guest instruction less the time the
  hypervisor logs for moving and checking the payload (`boot images: ... in
  N us`), which is the only work the single image adds before the VMs start.

QEMU models no caches or DRAM: virtual time counts instructions, not memory
behaviour; the figures compare boot paths on QEMU, not on hardware.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bulkhead.generate import build, qemu  # noqa: E402
from bulkhead.layout.load import load_platform  # noqa: E402
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


TFA_BIN = qemu.TFA_FLASH.parent / "obj" / "qemu" / "release"  # scripts/setup.sh tfa
FIPTOOL = qemu.TFA_FLASH.parent / "src" / "tools" / "fiptool" / "fiptool"
BL33_BASE = 0x60000000  # TF-A PLAT=qemu's NS_IMAGE_OFFSET: where BL31 enters BL33
FIP_OFFSET = 256 << 10  # PLAT_QEMU_FIP_BASE in flash (docs/firmware.md)
PROBE_RE = re.compile(r"^fwprobe: (entry counter|counter frequency|timer expiry to handler entry, counter ticks|"
                      r"handler end to resumed code, counter ticks) 0x([0-9a-f]+)\r?$", re.MULTILINE)


def tfa_probe() -> dict[str, float]:
    """The firmware probe as BL33 under -icount 0: virtual us from reset to
    BL33's first instruction, and the SDEI dispatch of a bound timer
    interrupt (expiry to handler, handler end to the interrupted code)."""
    out = OUT / "fwprobe"
    subprocess.run(["make", "-s", "-C", str(ROOT / "tools" / "fwprobe"), f"BASE=0x{BL33_BASE:x}", f"OUT={out}"],
                   check=True)
    fip = out / "fip.bin"
    subprocess.run([str(FIPTOOL), "update", "--nt-fw", str(out / "fwprobe.bin"), "--out", str(fip),
                    str(TFA_BIN / "fip.bin")], check=True, stdout=subprocess.DEVNULL)
    bl1 = (TFA_BIN / "bl1.bin").read_bytes()
    flash = out / "flash.bin"
    flash.write_bytes(bl1.ljust(FIP_OFFSET, b"\0") + fip.read_bytes())
    base = qemu.command(load_platform("qemu-virt"), out / "unused.elf", (), icount=0, extra=("-no-reboot",))
    status, timed_out, output = runner.supervise(qemu.tfa_command(base, out, flash), timeout=120)
    got = {m.group(1): int(m.group(2), 16) for m in PROBE_RE.finditer(output)}
    if status != 0 or timed_out or len(got) != 4:
        raise SystemExit(f"bench/boot.py: the firmware probe as BL33 failed (status {status}):\n{output}")
    us = 1e6 / got["counter frequency"]
    return {"BL33 entry": got["entry counter"] * us,
            "SDEI bound timer to handler": got["timer expiry to handler entry, counter ticks"] * us,
            "SDEI complete to the interrupted code": got["handler end to resumed code, counter ticks"] * us}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Boot benchmark of configs/dual.yaml (docs/boot.md, docs/firmware.md).")
    ap.add_argument("--boot", action="append", choices=("uboot", "tfa"),
                    help="firmware chain(s) to compare with QEMU -kernel (repeatable; default: uboot); "
                         "tfa needs 'bash scripts/setup.sh tfa'")
    args = ap.parse_args(argv)
    chains: list[str] = list(dict.fromkeys(args.boot or ["uboot"]))
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
    chain_us = {chain: first_guest_us(chain) for chain in chains}
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
    names = {"uboot": "U-Boot chain (FIT over TFTP)", "tfa": "TF-A + U-Boot chain (secure=on, FIT over TFTP)"}
    for chain, (us, chain_install_us) in chain_us.items():
        print(f"  {names[chain]}: {us} us (payload move + CRC {chain_install_us} us; "
              f"firmware before the hypervisor, derived: {us - image_us} us)")
    print(f"  loader-staged (derived: single image less its {install_us} us payload move + CRC): {staged_us} us")
    print(f"  ratio single image / loader-staged: {image_us / staged_us:.2f}")
    for chain, (us, _) in chain_us.items():
        print(f"  ratio {chain} / single image: {us / image_us:.1f}")
        print(f"  ratio {chain} / loader-staged: {us / staged_us:.1f}")
    if "tfa" in chain_us:
        probe = tfa_probe()
        entry = round(probe["BL33 entry"])
        print(f"  TF-A alone, reset to BL33 entry (BL1, BL2, BL31; probe as BL33): {entry} us")
        print(f"  U-Boot and the FIT's TFTP on the TF-A chain (derived): {chain_us['tfa'][0] - image_us - entry} us "
              "(DHCP, TFTP of the FIT, bootm; not deterministic, see above)")
        print("TF-A's SDEI, the probe at EL2 (virtual time, -icount shift=0; generic counter at 62.5 MHz):")
        for name in ("SDEI bound timer to handler", "SDEI complete to the interrupted code"):
            print(f"  {name}: {probe[name]:.2f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
