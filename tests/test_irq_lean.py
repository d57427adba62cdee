# SPDX-License-Identifier: Apache-2.0
"""The interrupt hot path's lean try (issue #43 item 4, docs/interrupts.md
"The hot path"): el2_vectors' IRQ slot saves only x0-x7, x16, x17 and x30
before it calls irq_guest_lean (core/irq/irq_lean.c), so that function
must touch no other caller-saved register (hypervisor/Makefile builds it
with x8-x15 and x18 fixed) and call nothing. Checked on the built code of
configs/dual.yaml's hypervisor: a compiler or flag change that breaks the
contract fails here, not in a guest whose registers change under it."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from bulkhead.generate import build as build_mod

ROOT = Path(__file__).resolve().parent.parent
CALLER_SAVED = {f"x{n}" for n in range(19)} | {"x30"}
INSN_RE = re.compile(r"^\s*([0-9a-f]+):\s+[0-9a-f]{8}\s+(\S+)\s*(.*)$")
REG_RE = re.compile(r"\b([xw])([0-9]|[12][0-9]|30)\b")

pytestmark = pytest.mark.skipif(shutil.which("aarch64-linux-gnu-gcc") is None,
                                reason="needs the AArch64 cross compiler")


@pytest.fixture(scope="module")
def disasm(tmp_path_factory: pytest.TempPathFactory) -> str:
    out = tmp_path_factory.mktemp("lean")
    with open("/dev/null", "w") as null:
        elf = build_mod.build(ROOT / "configs" / "dual.yaml", out, log=null).elf
    return subprocess.run(["aarch64-linux-gnu-objdump", "-d", str(elf)], check=True, capture_output=True,
                          text=True).stdout


def function(text: str, name: str) -> list[tuple[int, str, str]]:
    """(address, mnemonic, operands) of each instruction of the symbol name."""
    m = re.search(rf"^[0-9a-f]+ <{re.escape(name)}>:\n(.*?)(?:\n\n|\Z)", text, re.M | re.S)
    assert m, f"{name} is not in the image"
    return [(int(i[1], 16), i[2], i[3]) for i in map(INSN_RE.match, m[1].splitlines()) if i]


def registers(operands: str) -> set[str]:
    """The general registers an instruction names, as x<n>."""
    return {f"x{n}" for _, n in REG_RE.findall(operands.split("//")[0])}


def test_lean_try_touches_only_what_the_vector_saved(disasm: str) -> None:
    body = function(disasm, "irq_guest_lean")
    start, end = body[0][0], body[-1][0]
    used: set[str] = set()
    for addr, op, args in body:
        assert op not in ("bl", "blr"), f"{addr:#x}: irq_guest_lean calls out ({op} {args})"
        if op in ("b", "cbz", "cbnz", "tbz", "tbnz") or op.startswith("b."):
            target = int(args.split("//")[0].split(",")[-1].split()[0], 16)
            assert start <= target <= end, f"{addr:#x}: a branch out of irq_guest_lean ({op} {args})"
        if op == "br":  # the list-register table: a computed branch within the function
            assert any(o == "adr" for _, o, _ in body), f"{addr:#x}: br without its table"
        used |= registers(args) & CALLER_SAVED
    fixed = {f"x{n}" for n in (*range(8, 16), 18)}
    assert not used & fixed, f"irq_guest_lean uses {sorted(used & fixed)}, which the vector does not save"
    # and the slot saves every caller-saved register the function does use
    slots = function(disasm, "guest_vectors")
    irq = [i for i in slots if i[0] - slots[0][0] == 0x80]
    assert irq, "no IRQ slot at guest_vectors + 0x80"
    at = slots.index(irq[0])
    saved: set[str] = set()
    for _, op, args in slots[at:]:
        if op == "bl":
            assert "irq_guest_lean" in args, args
            break
        assert op in ("stp", "str"), (op, args)
        saved |= registers(args.split("[")[0])
    assert used <= saved, f"irq_guest_lean uses {sorted(used - saved)}, which the IRQ slot does not save"
    assert saved == {f"x{n}" for n in range(8)} | {"x16", "x17", "x30"}, sorted(saved)
