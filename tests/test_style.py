# SPDX-License-Identifier: Apache-2.0
"""Style gates in the suite (#26 item 3): clang-format on every tracked C
file, mypy --strict and ruff on the Python, and the hypervisor built with
clang as well as gcc for both GIC versions (-Werror: what clang warns about
fails). scripts/check-commits.sh is tested in tests/test_commits.py.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GENERATED = ("tests/golden/",)  # generated C, compared byte for byte instead


def tracked(*patterns: str) -> list[str]:
    out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "--", *patterns], capture_output=True, text=True,
                         check=True).stdout.split()
    return [f for f in out if not f.startswith(GENERATED)]


@pytest.mark.skipif(shutil.which("clang-format") is None, reason="needs clang-format (scripts/setup.sh)")
def test_c_is_clang_formatted() -> None:
    files = tracked("*.c", "*.h")
    assert len(files) > 100
    res = subprocess.run(["clang-format", "--dry-run", "-Werror", *files], cwd=ROOT, capture_output=True,
                         text=True)
    wrong = sorted({line.split(":")[0] for line in res.stderr.splitlines() if ": error:" in line})
    assert res.returncode == 0 and not wrong, f"run clang-format -i on: {' '.join(wrong)}\n{res.stderr[:2000]}"


def test_mypy_strict() -> None:
    res = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True)  # [tool.mypy]
    assert res.returncode == 0, res.stdout + res.stderr


def test_ruff() -> None:
    res = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "."], cwd=ROOT, capture_output=True,
                         text=True)  # [tool.ruff]
    assert res.returncode == 0, res.stdout + res.stderr


CLANG_BUILDS = {  # GIC version -> (golden config.c, board, UART driver)
    3: ("hello.config.c", "qemu-virt", "pl011"),
    2: ("zynqmp.config.c", "zynqmp", "cadence"),
}


@pytest.mark.skipif(shutil.which("clang") is None or shutil.which("aarch64-linux-gnu-ld") is None,
                    reason="needs clang and the aarch64 binutils (scripts/setup.sh)")
@pytest.mark.parametrize("gic", sorted(CLANG_BUILDS))
def test_hypervisor_builds_with_clang(gic: int) -> None:
    """clang --target=aarch64-linux-gnu, linking through the cross binutils;
    incremental in build/clang-gic<N>."""
    config, board, uart = CLANG_BUILDS[gic]
    out = ROOT / "build" / f"clang-gic{gic}"
    res = subprocess.run(
        ["make", "-s", "-j2", "-C", str(ROOT / "hypervisor"), f"O={out}", "CC=clang --target=aarch64-linux-gnu",
         f"CONFIG_C={ROOT / 'tests' / 'golden' / config}", f"GIC={gic}", f"UART={uart}", f"PLATFORM={board}"],
        capture_output=True, text=True, env={**os.environ, "LC_ALL": "C"})
    assert res.returncode == 0, res.stdout + res.stderr
    assert "warning" not in res.stderr, res.stderr
    elf = out / "bulkhead.elf"
    head = elf.read_bytes()[:20]
    assert head[:4] == b"\x7fELF" and int.from_bytes(head[18:20], "little") == 183  # EM_AARCH64
