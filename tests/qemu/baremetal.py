# SPDX-License-Identifier: Apache-2.0
"""Booting a bare-metal guest directly on QEMU at EL1, without the hypervisor
(guests/README.md "Running one without the hypervisor"): QEMU's virt machine
has the RAM/UART/GIC/PL031 addresses a Bulkhead VM sees and implements PSCI
over HVC itself; parameters go in a "vm=..." block at 0x40fff000, which the
runtime reads when x0 = 0."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

PARAMS_ADDR = 0x40FFF000
TIMEOUT = 60


def boot(elf: Path, tmp_path: Path, params: dict[str, object] | None = None, *, cpu: str = "cortex-a53",
         smp: int = 4, extra: Sequence[str] = (), timeout: float = TIMEOUT) -> list[str]:
    """Boots ``elf`` with ``params`` (none: no block) and ``extra`` QEMU
    options until it powers off; its console lines."""
    argv = [
        "qemu-system-aarch64", "-M", "virt,gic-version=3", "-cpu", cpu, "-smp", str(smp),
        "-m", "1G", "-nographic", "-no-reboot", "-kernel", str(elf), *extra,
    ]
    if params is not None:
        block = tmp_path / "params.txt"
        block.write_text("vm=bare\n" + "".join(f"{k}={v}\n" for k, v in params.items()))
        argv += ["-device", f"loader,file={block},addr=0x{PARAMS_ADDR:x}"]
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if exc.stdout else ""
        pytest.fail(f"QEMU timed out after {timeout} s (guest did not power off)\n{out}")
    output = proc.stdout.decode(errors="replace").replace("\r", "")
    assert proc.returncode == 0, output + proc.stderr.decode(errors="replace")
    return output.splitlines()


def make_guest(out: Path, name: str) -> Path:
    """Builds guest ``name`` into ``out``; its ELF."""
    repo = Path(__file__).resolve().parents[2]
    proc = subprocess.run(["make", "-C", str(repo / "guests"), f"O={out}", name],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out / f"{name}.elf"
