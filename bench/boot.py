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
  - with `--boot tfa` (repeatable with `--boot uboot`) the full firmware
    chain: TF-A's BL1, BL2 and BL31 at EL3 on `secure=on`, then the same
    U-Boot chain (docs/firmware.md). Each chain is booted twice: over TFTP
    (what a board does) and with the FIT in RAM (`run --fit-in-ram`: QEMU
    loads the FIT, U-Boot's environment runs the same bootm on it, no
    network), which is deterministic under -icount and is split into
    TF-A's, U-Boot's and the hypervisor's parts: the firmware's part is
    the chain's `C entered` stamp less the same image's under QEMU's
    -kernel (entered at reset). TF-A's own share (reset to BL33 entry)
    is measured apart, deterministically: the firmware probe
    (tools/fwprobe) as BL33 in a copy of the FIP prints the generic counter
    at its first instruction (also padded to U-Boot's size: BL2 copies
    BL33 from flash, about 6 us per KiB; that figure is TF-A's share in the
    split above), and the cost of an SDEI dispatch of a bound
    interrupt (its timer's expiry to the handler, the handler's
    SDEI_EVENT_COMPLETE to the interrupted code). Over TFTP U-Boot's part
    is not deterministic under -icount: while it waits for QEMU's user-mode
    network (DHCP, TFTP), whose answers come in host time, it runs a
    host-dependent number of instructions;
- the boot's phases from the hypervisor's `boot phases` line (counter
  readings on the boot CPU) and each VM's first instruction: they add up to
  the last VM's first instruction, so nothing is left unaccounted.

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
from bulkhead.generate.fit import UBOOT_BIOS  # noqa: E402
from bulkhead.layout.load import load_platform  # noqa: E402
from bulkhead.layout.placement import System  # noqa: E402
from bulkhead.run import runner  # noqa: E402
from bulkhead.run.backend import RunOptions  # noqa: E402

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
    """A pattern that matches once every VM's first instruction was logged
    (under QEMU's PSCI the VM on the boot CPU enters last; under TF-A's
    CPU_ON the other CPUs start later than the boot CPU's own vCPU)."""
    return "(?s)" + "".join(rf"(?=.*vm {re.escape(vm.name)}: first guest instruction at \d+ us)"
                            for vm in system.vms)


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


def c_entered(lines: list[str]) -> int:
    """The `boot phases` line's first stamp: boot.S done, C entered."""
    for line in lines:
        if m := PHASES_RE.match(line):
            return int(m.group(1))
    raise SystemExit("bench/boot.py: no 'boot phases' line")


def split(chain: list[str], direct: list[str], bl33_entry: float | None) -> dict[str, int]:
    """A firmware chain's time to the last VM's first instruction, in parts:
    the firmware's (reset to the hypervisor's entry: the chain's `C entered`
    less the same image's under QEMU's -kernel, which enters it at reset, so
    boot.S's share counts as the hypervisor's), split into TF-A's (reset to
    BL33 entry, the probe's ``bl33_entry``; None: no TF-A) and U-Boot's (the
    rest), then the hypervisor's (its entry to the last VM's first
    instruction) and the total."""
    total = max(firsts(chain).values())
    firmware = c_entered(chain) - c_entered(direct)
    out: dict[str, int] = {}
    if bl33_entry is not None:
        out["TF-A (reset to BL33 entry: the U-Boot-sized probe's)"] = round(bl33_entry)
        out["U-Boot (BL33 entry to the hypervisor's entry)"] = firmware - round(bl33_entry)
    else:
        out["U-Boot (reset to the hypervisor's entry)"] = firmware
    out["hypervisor (entry to the last VM's first instruction)"] = total - firmware
    out["total"] = total
    return out


def boot_run(argv: list[str], pattern: str) -> list[str]:
    status, timed_out, output = runner.supervise(argv, timeout=600, until=re.compile(pattern))
    lines = output.splitlines()
    if not firsts(lines):
        raise SystemExit(f"bench/boot.py: no 'first guest instruction' line (status {status}, "
                         f"timed out {timed_out}):\n{output[-2000:]}")
    return lines


TFA_BIN = qemu.TFA_FLASH.parent / "obj" / "qemu" / "release"  # scripts/setup.sh tfa
FIPTOOL = qemu.TFA_FLASH.parent / "src" / "tools" / "fiptool" / "fiptool"
BL33_BASE = 0x60000000  # TF-A PLAT=qemu's NS_IMAGE_OFFSET: where BL31 enters BL33
FIP_OFFSET = 256 << 10  # PLAT_QEMU_FIP_BASE in flash (docs/firmware.md)
PROBE_RE = re.compile(r"^fwprobe: (entry counter|counter frequency|timer expiry to handler entry, counter ticks|"
                      r"handler end to resumed code, counter ticks) 0x([0-9a-f]+)\r?$", re.MULTILINE)


def _probe_as_bl33(out: Path, bl33: Path, name: str) -> dict[str, int]:
    """Boot TF-A's flash image with ``bl33`` as BL33 (a copy of the FIP)
    under -icount 0; the probe's counter readings."""
    fip = out / f"fip-{name}.bin"
    subprocess.run([str(FIPTOOL), "update", "--nt-fw", str(bl33), "--out", str(fip), str(TFA_BIN / "fip.bin")],
                   check=True, stdout=subprocess.DEVNULL)
    flash = out / f"flash-{name}.bin"
    flash.write_bytes((TFA_BIN / "bl1.bin").read_bytes().ljust(FIP_OFFSET, b"\0") + fip.read_bytes())
    base = qemu.command(load_platform("qemu-virt"), out / "unused.elf", (), icount=0, extra=("-no-reboot",))
    status, timed_out, output = runner.supervise(qemu.tfa_command(base, out, flash), timeout=120)
    got = {m.group(1): int(m.group(2), 16) for m in PROBE_RE.finditer(output)}
    if status != 0 or timed_out or len(got) != 4:
        raise SystemExit(f"bench/boot.py: the firmware probe as BL33 ({name}) failed (status {status}):\n{output}")
    return got


def tfa_probe() -> dict[str, float]:
    """The firmware probe as BL33 under -icount 0: virtual us from reset to
    BL33's first instruction, as is and padded to the size of U-Boot (the
    BL33 of scripts/setup.sh's FIP: BL2 copies BL33 from flash, so its size
    counts), and the SDEI dispatch of a bound timer interrupt (expiry to
    handler, handler end to the interrupted code)."""
    out = OUT / "fwprobe"
    subprocess.run(["make", "-s", "-C", str(ROOT / "tools" / "fwprobe"), f"BASE=0x{BL33_BASE:x}", f"OUT={out}"],
                   check=True)
    got = _probe_as_bl33(out, out / "fwprobe.bin", "probe")
    padded = out / "fwprobe-uboot-sized.bin"
    padded.write_bytes((out / "fwprobe.bin").read_bytes().ljust(UBOOT_BIOS.stat().st_size, b"\0"))
    sized = _probe_as_bl33(out, padded, "uboot-sized")
    us = 1e6 / got["counter frequency"]
    return {"BL33 entry": got["entry counter"] * us,
            "BL33 entry, U-Boot-sized BL33": sized["entry counter"] * us,
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
        "bulkhead.elf (self-contained)": result.elf.stat().st_size,
        "bulkhead-placed.elf": result.placed_elf.stat().st_size,
        "bulkhead.bin (flat, self-contained)": result.elf.with_suffix(".bin").stat().st_size,
        "bulkhead.itb": result.itb.stat().st_size,
    }
    pattern = until_last(result.system)
    argv = [*result.qemu_argv, "-icount", "shift=0,align=off,sleep=off"]
    placed = boot_run(argv, pattern)
    self_contained = boot_run([str(result.elf) if a == str(result.placed_elf) else a for a in argv], pattern)
    chain_first: dict[str, dict[str, int]] = {}
    chain_lines: dict[str, list[str]] = {}
    for chain in chains:
        for fit_in_ram in (False, True):
            key = f"{chain} ram" if fit_in_ram else chain
            res = runner.run(CONFIG, RunOptions(timeout=600, icount=0, out=OUT, boot=chain,
                                                until=re.compile(pattern), build_log=sys.stderr,
                                                fit_in_ram=fit_in_ram))
            chain_lines[key] = res.all_lines()
            chain_first[key] = firsts(chain_lines[key])
            if not chain_first[key]:
                raise SystemExit(f"bench/boot.py: the {key} run reached no guest: {res.reason}")
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
    for chain in chains:  # the first phase holds the firmware's part
        print(f"boot phases, {chain} with the FIT in RAM (the first from reset, through the firmware):")
        for name, us in phases(chain_lines[f"{chain} ram"]).items():
            print(f"  {name}: {us}")
    names = {"uboot": "U-Boot chain (DHCP, TFTP of the FIT, bootm of the flat image)",
             "uboot ram": "U-Boot chain, FIT in RAM (run --fit-in-ram: no network, bootm of the flat image)",
             "tfa": "TF-A + U-Boot chain (secure=on, then as the U-Boot chain)",
             "tfa ram": "TF-A + U-Boot chain, FIT in RAM (run --boot tfa --fit-in-ram)"}
    rows = [("placed ELF (QEMU -kernel, what `bulkhead run` boots)", firsts(placed)),
            ("self-contained ELF / flat image (payload moved, CRC-32, copied)", firsts(self_contained)),
            *((names[chain], first) for chain, first in chain_first.items())]
    print("first guest instruction per VM (virtual us since reset):")
    for label, first in rows:
        print(f"  {label}: " + ", ".join(f"{vm} {us}" for vm, us in first.items())
              + f"; last {max(first.values())}")
    last = [max(first.values()) for _, first in rows]
    print(f"  ratio self-contained / placed: {last[1] / last[0]:.0f}")
    for k, chain in enumerate(chain_first, start=2):
        print(f"  ratio {chain} / self-contained: {last[k] / last[1]:.1f}")
    probe = tfa_probe() if "tfa" in chains else None
    if probe is not None:
        entry = round(probe["BL33 entry"])
        print(f"  TF-A alone, reset to BL33 entry (BL1, BL2, BL31; probe as BL33): {entry} us")
        sized = round(probe["BL33 entry, U-Boot-sized BL33"])
        print(f"  the same, the probe padded to U-Boot's size ({UBOOT_BIOS.stat().st_size} bytes; BL2 copies "
              f"BL33 from flash): {sized} us")
    print("split of the FIT-in-RAM chains (deterministic; virtual us):")
    for chain in chains:
        bl33 = probe["BL33 entry, U-Boot-sized BL33"] if probe is not None and chain == "tfa" else None
        parts = split(chain_lines[f"{chain} ram"], self_contained, bl33)
        print(f"  {chain}: " + ", ".join(f"{name} {us}" for name, us in parts.items()))
    if probe is not None:
        print("TF-A's SDEI, the probe at EL2 (virtual time, -icount shift=0; generic counter at 62.5 MHz):")
        for name in ("SDEI bound timer to handler", "SDEI complete to the interrupted code"):
            print(f"  {name}: {probe[name]:.2f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
