# SPDX-License-Identifier: Apache-2.0
"""The guest PMU (hypervisor/core/vpmu/vpmu.c, docs/bandwidth.md "Guest PMU").

guests/pmu counts its own INST_RETIRED and CPU_CYCLES over a loop of known
length, takes overflow interrupts of one of its counters, and checks that a
counter whose overflow flag it leaves set interrupts once only (no storm).
Under ``-icount shift=0`` one instruction is one nanosecond and QEMU's
CPU_CYCLES counts one per nanosecond, so both equal the instructions the
guest ran at EL0/EL1. QEMU models no caches nor memory events: only these two
events count there.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bulkhead.run.backend import RunOptions
from bulkhead.run.runner import RunResult, run

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "tests" / "configs" / "pmu.yaml"
TIMEOUT = 180.0
QEMU_A53_COUNTERS = 6  # PMCR_EL0.N of QEMU's cortex-a53
LOOP = 1000000  # iterations of 2 instructions
SETUP = 16  # instructions between enabling and disabling the counters besides the loop
# events past an overflow when the guest's handler reads the counter: the
# cycle counter's overflow comes on time (the hypervisor's exit path is not
# counted, NSH = 0); an event counter's when QEMU notices it, at the next
# exception entry: the guest's wait loop traps every ~2,300 instructions
LATE = {1: 200, 0: 6000}


def boot(tmp_path: Path, name: str, counter: int, bandwidth: str = "", platform: str = "qemu-virt") -> RunResult:
    text = CONFIG.read_text().replace("counter: 0}", f"counter: {counter}}}")
    text = text.replace("platform: qemu-virt", f"platform: {platform}")
    if bandwidth:
        text = text.replace("    # bandwidth", bandwidth)
    config = tmp_path / "pmu.yaml"
    config.write_text(text)
    return run(config, RunOptions(timeout=TIMEOUT, icount=0, out=ROOT / "build" / "qemu-tests" / name))


def values(res: RunResult, prefix: str) -> dict[str, int]:
    found = [line for line in res.lines("pmu") if line.startswith(prefix)]
    assert found, res.output
    return {k: int(v, 0) for k, v in re.findall(r"(\w+)=(0x[0-9a-f]+|\d+)", found[-1])}


def check_guest(res: RunResult, counter: int, cycle_counter: bool, n: int = QEMU_A53_COUNTERS,
                late: int | None = None) -> None:
    """late: the bound of events past an overflow (default LATE[counter])."""
    assert res.clean, f"{res.reason}\n{res.output}"
    assert "pmu: PASS" in res.lines("pmu"), res.output
    head = values(res, "pmu: pmcr=")
    assert head["n"] == n, res.output
    assert head["cycle_counter"] == int(cycle_counter), res.output
    count = values(res, "pmu: loop=")
    assert 2 * LOOP <= count["inst"] <= 2 * LOOP + SETUP, res.output
    assert 2 * LOOP <= count["cycles"] <= 2 * LOOP + SETUP, res.output  # 1 cycle per ns per instruction
    assert count["ccnt"] == (count["cycles"] if cycle_counter else 0), res.output
    ovf = values(res, "pmu: overflow")
    assert (ovf["irqs"], ovf["flags"], ovf["bad"]) == (4, 4, 0), res.output  # once per overflow
    assert ovf["late"] <= (LATE[counter] if late is None else late), res.output
    assert values(res, "pmu: storm")["irqs"] == 1, res.output
    assert values(res, "pmu: beyond")["beyond"] == 0, res.output
    # PMSWINC_EL0 (issue #32 item 6): only the enabled SW_INCR counter, only
    # while PMCR.E, a wrap sets the overflow flag
    assert values(res, "pmu: swinc") == {"counted": 5, "unenabled": 0, "stopped": 0, "wrapped": 0,
                                         "ovf": 1}, res.output


@pytest.mark.parametrize("counter", [0, 1], ids=["event-counter", "cycle-counter"])
def test_guest_pmu_unregulated(counter: int, tmp_path: Path) -> None:
    """On an unregulated CPU the guest has every counter and the cycle
    counter: it counts its own instructions and cycles exactly and takes one
    interrupt per overflow."""
    check_guest(boot(tmp_path, f"pmu-free-{counter}", counter), counter, cycle_counter=True)


@pytest.mark.parametrize("regulator", ["cycles", "event"])
def test_guest_pmu_regulated(regulator: str, tmp_path: Path) -> None:
    """On a regulated CPU the guest gets what the regulator leaves: on the
    cycle counter (qemu-virt's default) every event counter but not PMCCNTR
    (RAZ/WI); on an event counter PMCR.N = 5 (the last one is the
    regulator's, reads 0 whatever the guest writes) and PMCCNTR. It counts
    exactly (the regulator's work at EL2 is not counted) and takes one
    interrupt per overflow either way, while held to 50% of its CPU (the
    budget's bound itself is test_bandwidth.py's)."""
    bw = f"    bandwidth: {{period_us: 100, budget_events: 50000, counter: {regulator}}}"
    res = boot(tmp_path, f"pmu-reg-{regulator}", 0, bw)
    if regulator == "cycles":
        check_guest(res, 0, cycle_counter=False)
    else:
        check_guest(res, 0, cycle_counter=True, n=QEMU_A53_COUNTERS - 1)
