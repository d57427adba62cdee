# SPDX-License-Identifier: Apache-2.0
"""Issue #10 item 5: PSCI CPU_OFF of a VM's last vCPU ends the VM (reported
like SYSTEM_OFF, counted as a clean end), so the machine powers off instead
of waiting for a VM that can never run again."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.qemu


def test_cpu_off_of_last_vcpu_ends_vm(boot: Any) -> None:
    res = boot("last-cpu-off.yaml", timeout=30)
    out = res.output
    assert not res.timed_out, out
    smp = res.lines("smp")
    assert smp[-2:] == ["smp: PASS (2 vCPUs)", "smp: vcpu 0 CPU_OFF (last vCPU on)"], out
    hyp = [line.removeprefix("[bulkhead] ") for line in res.hyp_lines()]
    assert "vm smp: off (CPU_OFF of its last vCPU)" in hyp, out
    assert "all VMs off: clean=1 stopped=0" in hyp, out
    assert not [line for line in hyp if line.startswith("PANIC")], out
    assert res.clean, out
