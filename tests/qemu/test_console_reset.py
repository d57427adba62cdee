# SPDX-License-Identifier: Apache-2.0
"""Console input routing (with the Ctrl-T switch) and per-VM SYSTEM_RESET."""

from __future__ import annotations

from typing import Any

from qconsole import Console, build

_build = build  # module attribute: tests/qemu/test_zynqmp.py swaps it for the ZCU102 twins


def test_console_input_and_switch() -> None:
    con = Console(_build("console-input.yaml"))
    try:
        con.wait_for("[first] echo: ready")
        con.wait_for("[second] echo: ready")
        con.type("alpha\r")
        con.wait_for("[first] echo: got 'alpha'")
        con.type("\x14" "1")  # Ctrl-T 1: input to VM 1
        con.wait_for("[bulkhead] console input -> vm second")
        con.type("beta\r")
        con.wait_for("[second] echo: got 'beta'")
        status = con.finish()
    finally:
        con.finish()
    assert status == 0, con.lines
    assert "[bulkhead] all VMs off: clean=2 stopped=0" in con.lines, con.lines
    # input never leaked to the other VM
    assert not [line for line in con.lines if line.startswith("[second]") and "alpha" in line]


def test_system_reset_reloads_only_that_vm(boot: Any) -> None:
    res = boot("reset.yaml")
    assert res.clean, res.output
    assert res.lines("reset") == [
        "reset: boot 1", "reset: resetting", "reset: boot 2", "reset: PASS (image reloaded)",
    ], res.output
    hyp = [line.removeprefix("[bulkhead] ") for line in res.hyp_lines()]
    assert "vm reset: reset" in hyp, hyp
    assert res.lines("ticker")[-1] == "ticker: PASS (5 ticks)", res.output
