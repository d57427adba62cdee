# SPDX-License-Identifier: Apache-2.0
"""A direct VM's emulated interrupt sources (docs/interrupts.md "Emulated
sources"): with no list registers, the virtual UART's receive interrupt and
doorbells reach a VM with ``interrupts: direct`` as spare physical SPIs the
hypervisor sets pending. Boots through TF-A (``--boot tfa``) under
``-icount shift=0`` as tests/qemu/test_direct.py; the console is typed into
once the guest is ready (tests/qemu/qconsole.py), since a key typed earlier
would stop U-Boot's autoboot.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import test_direct as td
import test_pmu as tp
from qconsole import Console

from bulkhead.generate import qemu
from bulkhead.run.backend import RunOptions
from bulkhead.run.runner import prepare

pytestmark = pytest.mark.qemu


def test_direct_vm_uart_rx_and_doorbell_beside_ordinary_vm() -> None:
    """The direct VM (CPU 2) takes console input through its virtual PL011's
    receive interrupt (FIFO on, RX and RT at level 1/2: three lines typed)
    and answers 10 doorbells of the ordinary VM (CPU 0), one per doorbell
    interrupt; the ordinary VM checks every round trip through its own
    list-register doorbell. Its guest PMU's PMINTENSET_EL1 keeps a set bit
    (the overflow interrupt is offered: test_direct_vm_guest_pmu_overflow)."""
    assert qemu.TFA_FLASH.is_file(), "run 'bash scripts/setup.sh tfa' first (the TF-A flash image)"
    p = prepare(td.CONFIGS / "direct-emul.yaml", RunOptions(timeout=None, icount=0, out=td.OUT / "direct-emul", boot="tfa"))
    con = Console(p.argv)
    try:
        ready = con.wait_for_match(r"\[direct\] direct: emul console_irq=\d+ doorbell_irq=\d+", td.TIMEOUT)
        con.type("alpha\rbeta\rgamma\r")
        con.wait_for_match(r"\[direct\] direct: (PASS|FAIL)", td.TIMEOUT)
        con.wait_for_match(r"\[bulkhead\] all VMs off", td.TIMEOUT)
        status = con.finish()
    finally:
        con.finish()
    out = "\n".join(con.lines)
    d = [ln.removeprefix("[direct] ") for ln in con.lines if ln.startswith("[direct] ")]
    assert d and d[-1] == "direct: PASS", out[-4000:]
    # the toolchain's picks: spare SPIs of qemu-virt (platforms/qemu-virt.yaml gic.spare_spis)
    console_irq, doorbell_irq = (int(x) for x in re.findall(r"=(\d+)", ready))
    assert console_irq == 208 and doorbell_irq == 209, ready
    assert [ln for ln in d if ln.startswith("direct: emul line")] == [
        "direct: emul line 0 'alpha'", "direct: emul line 1 'beta'", "direct: emul line 2 'gamma'"], d
    st = re.search(r"direct: emul rx irqs=(\d+) lines=3 rings=(\d+) answered=10", out)
    assert st, out[-4000:]
    assert int(st[1]) >= 1 and int(st[2]) >= 10, st[0]
    assert "direct: emul irq_exits=0" in d, d
    # TX unmasked, 3 characters written: the unmask's edge and one per character
    assert "direct: emul tx irqs=4" in d, d  # the SPIs are taken at EL1: no exit on CPU 2
    assert "[ordinary] doorbell: PASS (10 round trips)" in con.lines, out[-4000:]
    # the guest PMU's overflow interrupt is offered (a spare PPI: test below), not WI
    assert "direct: emul pmintenset=0x80000000" in d, d
    assert not [ln for ln in con.lines if "guest PMU overflow interrupts are not delivered" in ln], out
    assert "[bulkhead] cpu 2: interrupts direct (SDEI 1.0), EL2 timer and PMU through SDEI" in con.lines, out
    assert "[bulkhead] all VMs off: clean=2 stopped=0" in con.lines, out[-4000:]
    assert status == 0, out[-4000:]


@pytest.mark.parametrize("counter", [0, 1], ids=["event-counter", "cycle-counter"])
def test_direct_vm_guest_pmu_overflow(counter: int, tmp_path: Path) -> None:
    """guests/pmu in a direct VM: its overflow interrupt is the spare PPI 22
    (the toolchain's pmu_irq parameter), set pending by the hypervisor after
    the PMU overflow reached it through SDEI; the guest takes one interrupt
    per overflow and no storm, counts as in tests/qemu/test_pmu.py."""
    text = tp.CONFIG.read_text().replace("counter: 0}", f"counter: {counter}}}")
    text = text.replace("platform: qemu-virt\n", "platform: qemu-virt\nsdei: true\n")
    text = text.replace("    cpus: [0]\n", "    cpus: [1]\n    interrupts: direct\n")
    config = tmp_path / "pmu-direct.yaml"
    config.write_text(text)
    res = td.boot(config, f"pmu-direct-{counter}")
    assert "[bulkhead] cpu 1: interrupts direct (SDEI 1.0), EL2 timer and PMU through SDEI" in res.output
    tp.check_guest(res, counter, cycle_counter=True)
