# SPDX-License-Identifier: Apache-2.0
"""A direct VM's emulated interrupt sources (docs/interrupts.md "Emulated
sources"): with no list registers, the virtual UART's receive interrupt and
doorbells reach a VM with ``interrupts: direct`` as spare physical SPIs the
hypervisor sets pending. Boots through TF-A (``--boot tfa``) as
tests/qemu/test_direct.py, whose helpers it uses.
"""

from __future__ import annotations

import re

import pytest
import test_direct as td

pytestmark = pytest.mark.qemu


def test_direct_vm_uart_rx_and_doorbell_beside_ordinary_vm() -> None:
    """The direct VM (CPU 2) takes console input through its virtual PL011's
    receive interrupt (FIFO on, RX and RT at level 1/2: three lines fed on
    the console) and answers 10 doorbells of the ordinary VM (CPU 0), which
    checks every round trip through its own list-register doorbell."""
    res = td.boot("direct-emul.yaml", "direct-emul", poke=(b"alpha\rbeta\rgamma\r", 0.5))
    d = res.lines("direct")
    assert d and d[-1] == "direct: PASS", res.output[-4000:]
    m = re.search(r"direct: emul console_irq=(\d+) doorbell_irq=(\d+)", res.output)
    assert m, res.output[-4000:]
    # the toolchain's picks: spare SPIs of qemu-virt (platforms/qemu-virt.yaml gic.spare_spis)
    console_irq, doorbell_irq = int(m[1]), int(m[2])
    assert 208 <= console_irq <= 287 and doorbell_irq == 209, m[0]
    assert ["direct: emul line 0 'alpha'", "direct: emul line 1 'beta'",
            "direct: emul line 2 'gamma'"] == [ln for ln in d if ln.startswith("direct: emul line")], d
    st = re.search(r"direct: emul rx irqs=(\d+) lines=3 rings=(\d+) answered=10", res.output)
    assert st, res.output[-4000:]
    assert int(st[1]) >= 1 and int(st[2]) >= 10, st[0]
    o = res.lines("ordinary")
    assert o and o[-1] == "doorbell: PASS (10 round trips)", res.output[-4000:]
    h = td.hyp(res)
    assert "cpu 2: interrupts direct (SDEI 1.0), EL2 timer and PMU through SDEI" in h, h
    assert "all VMs off: clean=2 stopped=0" in h, h
    assert res.clean, res.reason
