# SPDX-License-Identifier: Apache-2.0
"""Boot time budget (issue #26 item 5): configs/dual.yaml's first guest
instruction, every VM's, in virtual time under -icount shift=0
(deterministic), is within bench/budgets.toml [boot]; bench/boot.py's
phases account for all of it."""

from __future__ import annotations

import importlib.util
import re
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

from bulkhead.layout.load import load_system
from bulkhead.run.backend import RunOptions
from bulkhead.run.runner import run

ROOT = Path(__file__).resolve().parents[2]


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_boot", ROOT / "bench" / "boot.py")
    assert spec and spec.loader
    boot = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = boot
    spec.loader.exec_module(boot)
    return boot


def test_dual_first_guest_instruction_within_budget() -> None:
    if not (ROOT / "artefacts" / "linux" / "Image").exists():
        pytest.skip("needs the Linux artefacts (scripts/setup.sh linux)")
    boot = _bench()
    budget = tomllib.loads((ROOT / "bench" / "budgets.toml").read_text())["boot"]
    config = ROOT / budget["config"]
    out = ROOT / "build" / "qemu-tests" / "boot-budget"
    res = run(config, RunOptions(timeout=300, icount=0, out=out, 
                                     until=re.compile(boot.until_last(load_system(config)))))
    assert "PANIC" not in res.output, res.output[-2000:]
    lines = res.all_lines()
    # the images were placed by QEMU's loader: nothing moved, checked or copied at boot
    assert any(line.startswith("[bulkhead] boot images: ") and "placed by the boot loader" in line
               for line in lines), lines
    first = boot.firsts(lines)
    assert set(first) == {"linux", "rt"}, lines
    ph = boot.phases(lines)
    last = ph["first guest instruction"]
    assert last == max(first.values())
    assert last <= budget["first_guest_us"], (
        f"{config.name}: last VM's first guest instruction at {last} us (virtual), above the budget "
        f"of {budget['first_guest_us']} us (bench/budgets.toml); phases: {ph}")
    # every phase is there, none negative, and they add up to the first instruction
    top = [*boot.PHASE_NAMES, boot.LAST]
    assert all(ph[name] >= 0 for name in top), ph
    assert sum(ph[name] for name in top) == last, ph
    assert all(ph[f"vm {vm} started"] >= 0 for vm in first), ph
    # the Linux VM's 33 MiB of images are not copied: its memory set-up is stage 2 and device state
    assert ph["vm linux memory and images"] < 50, ph
