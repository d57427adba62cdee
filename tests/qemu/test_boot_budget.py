# SPDX-License-Identifier: Apache-2.0
"""Boot time budget (issue #26 item 5): configs/dual.yaml's first guest
instruction, in virtual time under -icount shift=0 (deterministic), is
within bench/budgets.toml [boot]; bench/boot.py's phases account for it."""

from __future__ import annotations

import importlib.util
import sys
import tomllib
from pathlib import Path

import pytest

from bulkhead.run.runner import run

ROOT = Path(__file__).resolve().parents[2]


def test_dual_first_guest_instruction_within_budget() -> None:
    if not (ROOT / "artefacts" / "linux" / "Image").exists():
        pytest.skip("needs the Linux artefacts (scripts/setup.sh linux)")
    spec = importlib.util.spec_from_file_location("bench_boot", ROOT / "bench" / "boot.py")
    assert spec and spec.loader
    boot = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = boot
    spec.loader.exec_module(boot)
    budget = tomllib.loads((ROOT / "bench" / "budgets.toml").read_text())["boot"]
    config = ROOT / budget["config"]
    res = run(config, timeout=300, icount=0, out=ROOT / "build" / "qemu-tests" / "boot-budget",
              until=boot.UNTIL_FIRST)
    assert "PANIC" not in res.output, res.output[-2000:]
    ph = boot.phases(res.all_lines())
    first = ph["first guest instruction"]
    assert first <= budget["first_guest_us"], (
        f"{config.name}: first guest instruction at {first} us (virtual), above the budget of "
        f"{budget['first_guest_us']} us (bench/budgets.toml); phases: {ph}")
    # the log accounts for all but a small remainder (MMU, GIC, per-CPU set-up)
    assert 0 <= ph["other (unaccounted by the log)"] < 1000, ph
    assert ph["payload move + CRC"] > 0 and any(k.startswith("vm linux") for k in ph)
