# SPDX-License-Identifier: Apache-2.0
"""vGIC list-register overflow and the `on_fault: stop` policy."""

from __future__ import annotations

from typing import Any

import pytest


def _hyp(res: Any) -> list[str]:
    return [line.removeprefix("[bulkhead] ") for line in res.hyp_lines()]


@pytest.mark.farm  # also on a labgrid target (docs/farm.md)
def test_more_pending_interrupts_than_list_registers(boot: Any) -> None:
    res = boot("vgicstress.yaml")
    assert res.clean, res.output
    assert res.lines("stress") == [
        "vgicstress: order 15 14 13 12 11 10 9 8 7 6 5 4",
        "vgicstress: PASS (12 SGIs in priority order)",
    ], res.output


@pytest.mark.farm  # also on a labgrid target (docs/farm.md)
def test_fault_stops_the_vm_and_spares_the_others(boot: Any) -> None:
    res = boot("isolation-stop.yaml")
    hyp = _hyp(res)
    assert not res.timed_out, res.output
    faults = [line for line in hyp if line.startswith("vm probe: fault vcpu=0 ")]
    assert len(faults) == 1 and faults[0].endswith("(access outside the VM)"), hyp
    assert "vm probe: stopped (fault)" in hyp, hyp
    # the probe never got to report: it was stopped at its first fault
    assert not [line for line in res.lines("probe") if "abort caught" in line], res.output
    assert res.lines("ticker")[-1] == "ticker: PASS (5 ticks)", res.output
    assert "all VMs off: clean=1 stopped=1" in hyp, hyp
    assert not res.clean
