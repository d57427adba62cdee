# SPDX-License-Identifier: Apache-2.0
"""Issue #10 item 1: 100 SYSTEM_RESETs of a two-vCPU VM, each with vCPU 1
busy (interrupts masked) at the time of the reset, all complete and each
reboot finds its image reloaded."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.qemu

RESETS = 100


def test_reset_storm_with_busy_sibling(boot: Any) -> None:
    res = boot("reset-busy.yaml", timeout=90)
    out = res.output
    assert not res.timed_out, out[-3000:]
    lines = res.lines("reset")
    boots = [line for line in lines if line.startswith("reset: boot ")]
    assert boots == [f"reset: boot {n}" for n in range(1, RESETS + 2)], out[-3000:]
    assert lines.count("reset: resetting") == RESETS, out[-3000:]
    assert lines[-1] == "reset: PASS (image reloaded)", out[-3000:]
    assert not [line for line in lines if "FAIL" in line], out[-3000:]
    hyp = [line.removeprefix("[bulkhead] ") for line in res.hyp_lines()]
    assert hyp.count("vm reset: reset") == RESETS, out[-3000:]
    assert "vm reset: off (clean)" in hyp, out[-3000:]
    assert res.clean, out[-3000:]
