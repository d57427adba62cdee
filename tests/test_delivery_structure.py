# SPDX-License-Identifier: Apache-2.0
"""Interrupt delivery is one interface per vCPU (#38 item 2,
hypervisor/core/vm/delivery.h, docs/interrupts.md): the run loop, the guest
PMU and the vGIC call through ``vcpu.irq`` and do not ask which mode a vCPU
or VM has.

A mode check is a use of ``BULKHEAD_DIRECT`` (or the features refactor's
``IS_ENABLED(DIRECT)``), ``CFG_VM_DIRECT`` or a ``direct`` field in C code.
It may appear only in the delivery itself (``core/vm/delivery.h`` selects the
implementation, ``core/irq_direct.*`` and ``core/irq_emul.*`` are the
implementations) and in ``core/config/config.h`` (the definitions). The direct
vector table (``arch/aarch64/vectors.S``), its C entries (``core/trap/trap.c``)
and the regulator's lean FIQ entry (``isolation/bw_lean.S``) are built only with direct mode: there a preprocessor line (``#if``,
``#endif``) is allowed, an expression is not. Comments do not count.
Planted checks in a copy of the text prove the scan can fail.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HYP = ROOT / "hypervisor"

MODE = re.compile(r"BULKHEAD_DIRECT|IS_ENABLED\(\s*(?:BULKHEAD_)?DIRECT\s*\)|CFG_VM_DIRECT|(?:->|\.)direct\b")
DELIVERY = {"core/vm/delivery.h", "core/vcpu/delivery_ops.h", "core/vcpu/irq_direct.c", "core/vcpu/irq_direct.h",
            "core/vcpu/irq_emul.c", "core/vcpu/irq_emul.h", "core/config/config.h"}
BUILD_ONLY = {"core/trap/trap.c", "arch/aarch64/vectors.S",  # `#if BULKHEAD_DIRECT` around the direct entries
              "isolation/bw_lean.S"}
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


def strip_comments(text: str) -> str:
    """``text`` with its C comments blanked, newlines kept (line numbers hold)."""
    return COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def offences(rel: str, text: str) -> list[str]:
    """``rel:line: code`` for every mode check ``text`` (the file ``rel`` of
    hypervisor/) has where it may not."""
    if rel in DELIVERY:
        return []
    out = []
    for n, line in enumerate(strip_comments(text).splitlines(), 1):
        if not MODE.search(line):
            continue
        if rel in BUILD_ONLY and re.match(r"\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b", line):
            continue
        out.append(f"{rel}:{n}: {line.strip()}")
    return out


def tree_offences(root: Path) -> list[str]:
    return [o for p in sorted(root.rglob("*")) if p.suffix in (".c", ".h", ".S")
            for o in offences(str(p.relative_to(root)), p.read_text())]


def test_no_mode_check_outside_the_delivery() -> None:
    assert tree_offences(HYP) == []


def test_the_run_loop_calls_no_implementation_directly() -> None:
    """core/vcpu/vcpu.c waits, enters, resets and exits through its vCPU's
    delivery only (core/vm/delivery.h's ``delivery_<op>(v->irq or d, ...)``)."""
    code = strip_comments((HYP / "core" / "vcpu" / "vcpu.c").read_text())
    named = sorted(set(re.findall(r"\b(irq_direct_\w+|irq_emul_\w+|guest_enter\w*|vgic_flush"
                                  r"|sdei_\w+|gic_send_sgi)\b", code)))
    assert named == []
    for op in ("poll", "wait", "exit_path", "enter", "reset"):
        assert re.search(rf"\bdelivery_{op}\((v->irq|d)\b", code), op


def test_planted_checks_are_found() -> None:
    vcpu = (HYP / "core" / "vcpu" / "vcpu.c").read_text()
    planted = vcpu + "\nstatic int x(struct vcpu *v) { return BULKHEAD_DIRECT && v->direct; }\n"
    assert [o.split(": ", 1)[1] for o in offences("core/vcpu/vcpu.c", planted)] == [
        "static int x(struct vcpu *v) { return BULKHEAD_DIRECT && v->direct; }"]
    vgic = "bool f(struct vm *vm)\n{\n\treturn IS_ENABLED(DIRECT) && (vm->cfg->flags & CFG_VM_DIRECT);\n}\n"
    assert offences("core/vgic/vgic.c", vgic) == [
        "core/vgic/vgic.c:3: return IS_ENABLED(DIRECT) && (vm->cfg->flags & CFG_VM_DIRECT);"]
    # a preprocessor switch is a mode check outside the direct entries' files
    assert offences("core/vpmu/vpmu.c", "#if BULKHEAD_DIRECT\n#endif\n") != []
    assert offences("core/trap/trap.c", "#if BULKHEAD_DIRECT\n#endif /* BULKHEAD_DIRECT */\n") == []
    assert offences("core/trap/trap.c", "if (BULKHEAD_DIRECT && x)\n") != []
    # comments do not count, the delivery's own files may
    assert offences("core/vcpu/vcpu.c", "/* was: BULKHEAD_DIRECT && v->direct */\n") == []
    assert offences("core/vcpu/irq_direct.c", "if (v->direct)\n") == []
