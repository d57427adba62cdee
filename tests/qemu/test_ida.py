# SPDX-License-Identifier: Apache-2.0
"""Invalidation-driven allocation (BH_HC_IDA_PREPARE) under QEMU: color-ida.yaml.

guests/ida reads the LLC geometry itself (CLIDR/CCSIDR) and checks the
hypervisor's answer: a full preparation is every way of exactly the sets of
the VM's colors (sets x k / N) and those sets' colors are exactly the VM's;
a partial one is the first sets, of the VM's colors only. `ida: [start]`
prepares at VM start (logged), `ida: [start, period]` also at each
regulation period start (the count the call returns grows); an uncolored VM
is refused. QEMU has no caches: the operations run but evict nothing, so
this checks which sets are touched and how many, not the miss rate.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from bulkhead.run.runner import RunResult


def test_ida_prepare(boot: Callable[..., RunResult]) -> None:
    res = boot("color-ida.yaml", timeout=120)
    assert res.clean, res.reason + "\n" + res.output
    for vm in ("ida", "reg", "plain"):
        assert res.lines(vm)[-1] == "ida: PASS", res.output
    assert "ida: uncolored VM refused (-3)" in res.lines("plain")
    for vm, colors, partial in (("ida", "0xf", "100 lines in 7 sets, colors 0x1"),
                                ("reg", "0xf00", "33 lines in 3 sets, colors 0x100")):
        lines = res.lines(vm)
        assert "ida: LLC L2 1024 KiB 16-way 64 B lines, 1024 sets" in lines, lines
        # colors 0-3 (8-11) of 16: a quarter of 1024 sets, 16 ways each
        assert any(re.fullmatch(rf"ida: full: 4096 lines \(256 KiB\) in 256 sets, colors {colors}, "
                                r"\d+ ns per KiB \(best of \d+\)", line) for line in lines), lines
        assert f"ida: partial: {partial}" in lines, lines
    so_far = {vm: int(next(line for line in res.lines(vm) if line.startswith("ida: preparations so far "))
                      .rsplit(" ", 1)[1]) for vm in ("ida", "reg")}
    assert so_far["ida"] == 2, so_far  # the one at start, then this call
    assert so_far["reg"] > 2, so_far   # ... and one per period start before the call
    hyp = res.hyp_lines()
    for vm in ("ida", "reg"):
        assert any(re.fullmatch(rf"\[bulkhead\] ida: vm {vm}: 4096 lines in 256 sets prepared at start in \d+ us",
                                line) for line in hyp), hyp
    assert not any("ida: vm plain" in line for line in hyp)
