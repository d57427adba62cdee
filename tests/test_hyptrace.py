# SPDX-License-Identifier: Apache-2.0
"""bench/hyptrace.py reads QEMU's execution trace as it is written: a block
QEMU logged and then did not start ("Stopped execution of TB chain
before", the -icount budget ran out) is logged again when it runs, and
counts once (issue #43 item 5: the direct FIQ rows with a regulator read
2 exits per interrupt where the trace holds 1)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.hyptrace import Symbols, pcs, window_exits  # noqa: E402

VECTORS = 0x40200800  # a vector table: its lower-EL FIQ entry is at +0x500
QUERY = 0x40210000  # hypercall_query, the guest's marker
LEAN = 0x40211000  # the period's lean path


def trace(cpu: int, pc: int) -> str:
    return f"Trace {cpu}: 0x7fea542720c0 [00000000/{pc:016x}/00000061/ff022201] \n"


def stopped(pc: int) -> str:
    return f"Stopped execution of TB chain before 0x7fea542720c0 [{pc:016x}] \n"


def symbols() -> Symbols:
    syms = Symbols.__new__(Symbols)
    syms.addrs = [VECTORS, QUERY, LEAN]
    syms.names = ["el2_vectors_direct", "hypercall_query", "bw_lean_fiq"]
    syms.vectors = [VECTORS]
    syms.sdei = set()
    return syms


def marker() -> list[str]:
    return [trace(1, VECTORS + 0x400), trace(1, QUERY), trace(1, QUERY + 4)]


def period(interrupted: bool) -> list[str]:
    """One FIQ on CPU 1; ``interrupted``: its first block logged, not run,
    with CPU 0's line between (QEMU runs the CPUs in turns)."""
    fiq = VECTORS + 0x500
    lines = [trace(1, fiq), stopped(fiq), trace(0, LEAN)] if interrupted else []
    return lines + [trace(1, fiq), trace(1, fiq + 4), trace(1, LEAN), trace(1, LEAN + 4)]


def test_a_block_logged_but_not_run_is_not_an_instruction(tmp_path: Path) -> None:
    log = tmp_path / "exec.log"
    log.write_text("".join(period(True) + [trace(1, LEAN + 8), stopped(LEAN + 8)]))
    fiq = VECTORS + 0x500
    assert list(pcs(log, 1)) == [fiq, fiq + 4, LEAN, LEAN + 4]
    assert list(pcs(log, 0)) == [LEAN]


def test_window_exits_counts_one_entry_per_period(tmp_path: Path) -> None:
    log = tmp_path / "exec.log"
    log.write_text("".join(marker() + period(True) + period(False) + period(True) + marker()))
    assert window_exits(log, symbols(), 1) == 3
