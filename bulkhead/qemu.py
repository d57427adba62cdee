# SPDX-License-Identifier: Apache-2.0
"""The QEMU command line for a built system."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from bulkhead.layout import StagedImage
from bulkhead.model import Platform

GDB_PORT = 1234


def command(
    platform: Platform,
    elf: Path,
    staged: Sequence[StagedImage],
    *,
    icount: int | None = None,
    gdb: bool = False,
    interactive: bool = False,
    extra: Sequence[str] = (),
) -> list[str]:
    """argv for QEMU: the hypervisor ELF plus one loader device per image.

    ``interactive``: multiplex QEMU's monitor onto stdio (``mon:stdio``, for a
    terminal; Ctrl-A X quits) instead of plain ``stdio``.
    """
    q = platform.qemu
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
    ]
    for img in staged:
        argv += ["-device", f"loader,file={img.file.absolute()},addr=0x{img.src_pa:x},force-raw=on"]
    if icount is not None:
        argv += ["-icount", f"shift={icount},align=off,sleep=off"]
    if gdb:
        argv += ["-s", "-S"]
    argv += list(extra)
    return argv
