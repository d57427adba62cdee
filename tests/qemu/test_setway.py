# SPDX-License-Identifier: Apache-2.0
"""Issue #10 item 2: data-cache maintenance by set/way is trapped
(HCR_EL2.TSW) and performed only as clean+invalidate, on the VM's own LLC
sets. QEMU models no caches, so what is asserted is the trap (the
hypervisor's count equals what the guest issued), which operations were
performed (all for an uncolored VM; L1 plus its own colors' L2 sets for a
colored one), that the guests keep running and that their data survives;
the effect on a real shared cache is not observable here."""

from __future__ import annotations

import re
from typing import Any

import pytest

pytestmark = pytest.mark.qemu

LEVEL = re.compile(r"setway: L(\d) (\d+) sets x (\d+) ways, line \d+ B")
PASS = re.compile(r"setway: PASS \((\d+) set/way operations, pattern intact\)")


def test_setway_ops_are_trapped_and_harmless(boot: Any) -> None:
    res = boot("setway.yaml", timeout=60)
    out = res.output
    assert not res.timed_out, out
    hyp = [line.removeprefix("[bulkhead] ") for line in res.hyp_lines()]
    for vm, colors in (("sw", 16), ("swc", 4)):
        lines = res.lines(vm)
        m = PASS.fullmatch(lines[-1]) if lines else None
        assert m, out
        issued = int(m.group(1))
        levels = {}
        for line in lines:
            lm = LEVEL.fullmatch(line)
            if lm:
                levels[int(lm.group(1))] = int(lm.group(2)) * int(lm.group(3))
        assert levels.get(1) and levels.get(2), out
        assert issued == 3 * (levels[1] + levels[2]), out
        # L2 is the LLC with 16 colors (qemu-virt: bits 12-15)
        performed = 3 * (levels[1] + levels[2] * colors // 16)
        assert f"vm {vm}: {issued} set/way cache operations trapped, {performed} performed" in hyp, out
    assert not [line for line in hyp if line.startswith("PANIC")], out
    assert res.clean, out
