# SPDX-License-Identifier: Apache-2.0
"""The QEMU command line for a built system."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from bulkhead.base.errors import BuildError, NoQemuModelError
from bulkhead.base.tree import REPO_ROOT
from bulkhead.config.model import Platform, QemuSpec
from bulkhead.generate import fit
from bulkhead.layout.placement import StagedImage

GDB_PORT = 1234


def model(platform: Platform) -> QemuSpec:
    """The platform's QEMU model; raises NoQemuModelError when it has none
    (a board without a ``qemu:`` section builds, but does not run)."""
    if platform.qemu is None:
        raise NoQemuModelError(
            f"platform '{platform.name}' ({platform.display}) has no QEMU model (no 'qemu:' section): "
            "`bulkhead build` makes its images for the board (docs/boards/), but `bulkhead run` needs a "
            "platform with 'qemu:'")
    return platform.qemu


def command(
    platform: Platform,
    elf: Path,
    staged: Sequence[StagedImage],
    *,
    icount: int | None = None,
    gdb: bool = False,
    gdb_port: int = GDB_PORT,
    interactive: bool = False,
    extra: Sequence[str] = (),
) -> list[str]:
    """argv for QEMU: the hypervisor ELF plus one loader device per image.

    ``interactive``: multiplex QEMU's monitor onto stdio (``mon:stdio``, for a
    terminal; Ctrl-A X quits) instead of plain ``stdio``. ``gdb``: start
    halted with a gdb server on localhost:``gdb_port``.
    """
    q = model(platform)
    argv = [
        q.binary,
        "-M", q.machine,
        "-cpu", q.cpu,
        "-smp", str(platform.ncpus),
        "-m", f"{q.memory >> 20}M",
        "-display", "none",
        "-monitor", "none",
        "-serial", "mon:stdio" if interactive else "stdio",
        "-kernel", str(elf.absolute()),
        *q.args,
    ]
    for img in staged:
        argv += ["-device", f"loader,file={img.file.absolute()},addr=0x{img.src_pa:x},force-raw=on"]
    if icount is not None:
        argv += ["-icount", f"shift={icount},align=off,sleep=off"]
    if gdb:
        argv += ["-gdb", f"tcp:localhost:{gdb_port}", "-S"]
    argv += list(extra)
    return argv


def uboot_command(argv: Sequence[str], tftp: Path) -> list[str]:
    """``argv`` turned into the real boot chain: Debian's U-Boot as firmware
    (``-bios``, entered at EL2), whose distro boot fetches ``boot.scr.uimg``
    and then the FIT from QEMU's user-mode TFTP server serving ``tftp``
    (:func:`bulkhead.generate.build.uboot_tftp`); the hypervisor gets U-Boot's DTB in x0."""
    if not fit.UBOOT_BIOS.is_file():
        raise BuildError(f"{fit.UBOOT_BIOS} not found: install u-boot-qemu (scripts/setup.sh)")
    return _firmware(argv, fit.UBOOT_BIOS, tftp)


def _firmware(argv: Sequence[str], bios: Path, tftp: Path) -> list[str]:
    """``argv`` with ``bios`` instead of ``-kernel`` and the TFTP network."""
    out = list(argv)
    k = out.index("-kernel")
    del out[k:k + 2]
    return [*out, "-bios", str(bios), "-netdev", f"user,id=bhnet,tftp={tftp}",
            "-device", "virtio-net-device,netdev=bhnet"]


TFA_FLASH = REPO_ROOT / "build" / "tfa" / "flash.bin"  # scripts/setup.sh tfa (docs/firmware.md)


def tfa_command(argv: Sequence[str], tftp: Path, flash: Path = TFA_FLASH) -> list[str]:
    """``argv`` turned into the full firmware chain (docs/firmware.md): the
    machine with EL3 and a two-security-state GIC (``secure=on``), TF-A's
    BL1 and FIP (BL2, BL31 with SDEI, Debian's U-Boot as BL33) as the flash
    image, then U-Boot at EL2 boots the FIT from TFTP as with
    :func:`uboot_command`. PSCI is TF-A's (SMC conduit)."""
    if not flash.is_file():
        raise BuildError(f"{flash} not found: build TF-A with 'bash scripts/setup.sh tfa' (docs/firmware.md)")
    out = _firmware(argv, flash, tftp)
    m = out.index("-M")
    options = [o for o in out[m + 1].split(",") if not o.startswith("secure=")]
    out[m + 1] = ",".join([*options, "secure=on"])
    return out
