# SPDX-License-Identifier: Apache-2.0
"""The QEMU command line for a built system."""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from pathlib import Path

from bulkhead.base.errors import BuildError, NoQemuModelError
from bulkhead.base.tree import REPO_ROOT
from bulkhead.config.model import Platform, QemuSpec
from bulkhead.generate import fit
from bulkhead.layout.placement import StagedImage

GDB_PORT = 1234
FLAT_NAME = "bulkhead.bin"  # the flat image beside the ELF (hypervisor/Makefile), for `qemu.kernel: image`


def model(platform: Platform) -> QemuSpec:
    """The platform's QEMU model; raises NoQemuModelError when it has none
    (a board without a ``qemu:`` section builds, but does not run)."""
    if platform.qemu is None:
        raise NoQemuModelError(
            f"platform '{platform.name}' ({platform.display}) has no QEMU model (no 'qemu:' section): "
            "`bulkhead build` makes its images for the board (docs/boards/), but `bulkhead run` needs a "
            "platform with 'qemu:'")
    return platform.qemu


def dtb_path(platform: Platform) -> Path | None:
    """The device tree QEMU passes the image (``qemu.dtb``, under the
    repository), or None. The run checks that it exists; a build for the
    board does not need it."""
    q = model(platform)
    return None if q.dtb is None else REPO_ROOT / q.dtb


def command(
    platform: Platform,
    elf: Path,
    staged: Sequence[StagedImage],
    *,
    icount: int | None = None,
    gdb: bool = False,
    gdb_port: int = GDB_PORT,
    gdb_halt: bool = True,
    interactive: bool = False,
    extra: Sequence[str] = (),
) -> list[str]:
    """argv for QEMU: the hypervisor ELF plus one loader device per image.

    ``interactive``: multiplex QEMU's monitor onto stdio (``mon:stdio``, for a
    terminal; Ctrl-A X quits) instead of plain ``stdio``. ``gdb``: a gdb
    server on localhost:``gdb_port``, QEMU halted before the first
    instruction unless ``gdb_halt`` is false (then it runs at once, and a
    debugger attaches whenever: to a run that hangs).
    """
    q = model(platform)
    # `kernel: image`: the flat arm64 Image, which QEMU boots as a boot loader
    # would (raspi4b: CPU 0 at its entry, the others parked in QEMU's spin
    # table; xlnx-versal-virt: at EL2 with its DTB in x0 and PSCI, not at EL3)
    kernel = elf if q.kernel == "elf" else elf.with_name(FLAT_NAME)
    argv = [
        q.binary,
        "-M", q.machine,
        "-cpu", q.cpu,
        "-smp", str(platform.ncpus),
        "-m", f"{q.memory >> 20}M",
        "-display", "none",
        "-monitor", "none",
        # the serial ports before the UART's (qemu.serial) are left unconnected
        *["-serial", "null"] * q.serial,
        "-serial", "mon:stdio" if interactive else "stdio",
        "-kernel", str(kernel.absolute()),
        *q.args,
    ]
    dtb = dtb_path(platform)
    if dtb is not None:
        argv += ["-dtb", str(dtb)]
    for img in staged:
        argv += ["-device", f"loader,file={img.file.absolute()},addr=0x{img.src_pa:x},force-raw=on"]
    if icount is not None:
        argv += ["-icount", f"shift={icount},align=off,sleep=off"]
    if gdb:
        argv += ["-gdb", f"tcp:localhost:{gdb_port}", *(["-S"] if gdb_halt else [])]
    argv += list(extra)
    return argv


def uboot_command(argv: Sequence[str], tftp: Path, fit_at: tuple[Path, int] | None = None) -> list[str]:
    """``argv`` turned into the real boot chain: Debian's U-Boot as firmware
    (``-bios``, entered at EL2), whose distro boot fetches ``boot.scr.uimg``
    and then the FIT from QEMU's user-mode TFTP server serving ``tftp``
    (:func:`bulkhead.generate.build.uboot_tftp`); the hypervisor gets U-Boot's DTB in x0.

    ``fit_at = (itb, address)``: QEMU loads the FIT into RAM at ``address``
    instead and U-Boot's ``bootcmd`` boots it from there, with no network:
    the user-mode network answers in host time, so only a run without it
    repeats instruction for instruction under ``-icount``."""
    if not fit.UBOOT_BIOS.is_file():
        raise BuildError(f"{fit.UBOOT_BIOS} not found: install u-boot-qemu (scripts/setup.sh)")
    return _firmware(argv, fit.UBOOT_BIOS, tftp, fit_at)


UBOOT_ENV_SIZE = 0x40000  # CONFIG_ENV_SIZE of Debian's qemu_arm64 U-Boot: its env at flash1's start
FLASH_BANK_SIZE = 64 << 20  # each of QEMU virt's two flash banks
# bootdelay -2: autoboot at once without looking for a key, which `run --stats`
# (Ctrl-T b at once on stdin) would otherwise be taken for
UBOOT_ENV_CHANGES = {"bootdelay": "-2", "boot_targets": "dhcp"}


def ram_bootcmd(address: int) -> str:
    """U-Boot's ``bootcmd`` for a FIT QEMU loaded at ``address`` (as the TFTP
    boot script's ``bootm``, powering off if it fails)."""
    return f"bootm 0x{address:x}#bulkhead - ${{fdtcontroladdr}}; echo bulkhead: boot failed; poweroff"


def uboot_env(binary: Path, changes: dict[str, str] | None = None) -> bytes | None:
    """An environment image for Debian's U-Boot: its default environment,
    found in ``binary``, with UBOOT_ENV_CHANGES (autoboot without the 2 s
    countdown or a look for a key, distro boot over DHCP only) and ``changes`` (values of names
    the default environment has), as U-Boot reads it from flash:
    CRC-32 (little-endian) of the rest, then NUL-terminated ``name=value``
    pairs, padded to UBOOT_ENV_SIZE. None when ``binary`` has no default
    environment with those names (then U-Boot keeps its own)."""
    changed = UBOOT_ENV_CHANGES | (changes or {})
    data = binary.read_bytes()
    at = data.find(b"\0bootcmd=")
    while at >= 0:
        start = at + 1
        pairs = [p.decode(errors="replace").partition("=")
                 for p in data[start:data.find(b"\0\0", start)].split(b"\0")]
        if {"bootdelay", "bootcmd_dhcp", *changed} <= {name for name, _, _ in pairs}:
            text = b"".join(f"{n}={changed.get(n, v)}".encode() + b"\0" for n, _, v in pairs) + b"\0"
            if len(text) + 4 > UBOOT_ENV_SIZE:
                return None
            body = text.ljust(UBOOT_ENV_SIZE - 4, b"\xff")
            return zlib.crc32(body).to_bytes(4, "little") + body
        at = data.find(b"\0bootcmd=", start)
    return None


def _env_flash(tftp: Path, fit_address: int | None = None) -> list[str]:
    """QEMU virt's second flash bank holding :func:`uboot_env` (read-only,
    so runs of one out dir can share it), or nothing without an environment.
    ``fit_address``: ``bootcmd`` boots the FIT in RAM there (a file of its own)."""
    changes = None if fit_address is None else {"bootcmd": ram_bootcmd(fit_address)}
    env = uboot_env(fit.UBOOT_BIOS, changes) if fit.UBOOT_BIOS.is_file() else None
    if env is None:
        return []
    path = tftp.parent / ("uboot-env.img" if fit_address is None else "uboot-env-ram.img")
    if not path.is_file() or path.stat().st_size != FLASH_BANK_SIZE or path.read_bytes()[:len(env)] != env:
        tmp = path.with_suffix(".tmp")
        with open(tmp, "wb") as f:
            f.write(env)
            f.truncate(FLASH_BANK_SIZE)
        tmp.replace(path)
    return ["-drive", f"if=pflash,unit=1,format=raw,readonly=on,file={path}"]


def _firmware(argv: Sequence[str], bios: Path, tftp: Path, fit_at: tuple[Path, int] | None = None) -> list[str]:
    """``argv`` with ``bios`` instead of ``-kernel``, U-Boot's environment in
    flash and the TFTP network, or (``fit_at``) the FIT loaded into RAM."""
    out = list(argv)
    k = out.index("-kernel")
    del out[k:k + 2]
    if fit_at is not None:
        itb, address = fit_at
        env = _env_flash(tftp, address)
        if not env:
            raise BuildError(f"{fit.UBOOT_BIOS}: no U-Boot default environment found to boot a FIT in RAM "
                             "from (boot it over TFTP)")
        return [*out, "-bios", str(bios), *env,
                "-device", f"loader,file={itb.absolute()},addr=0x{address:x},force-raw=on"]
    return [*out, "-bios", str(bios), *_env_flash(tftp), "-netdev", f"user,id=bhnet,tftp={tftp}",
            "-device", "virtio-net-device,netdev=bhnet"]


TFA_FLASH = REPO_ROOT / "build" / "tfa" / "flash.bin"  # scripts/setup.sh tfa (docs/firmware.md)


def tfa_command(argv: Sequence[str], tftp: Path, flash: Path = TFA_FLASH,
                fit_at: tuple[Path, int] | None = None) -> list[str]:
    """``argv`` turned into the full firmware chain (docs/firmware.md): the
    machine with EL3 and a two-security-state GIC (``secure=on``), TF-A's
    BL1 and FIP (BL2, BL31 with SDEI, Debian's U-Boot as BL33) as the flash
    image, then U-Boot at EL2 boots the FIT from TFTP as with
    :func:`uboot_command` (``fit_at`` as there). PSCI is TF-A's (SMC conduit)."""
    if not flash.is_file():
        raise BuildError(f"{flash} not found: build TF-A with 'bash scripts/setup.sh tfa' (docs/firmware.md)")
    out = _firmware(argv, flash, tftp, fit_at)
    m = out.index("-M")
    options = [o for o in out[m + 1].split(",") if not o.startswith("secure=")]
    out[m + 1] = ",".join([*options, "secure=on"])
    return out
