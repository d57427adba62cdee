# SPDX-License-Identifier: Apache-2.0
"""Linux in direct interrupt mode (docs/interrupts.md "Linux in direct
mode"): Debian's stock arm64 kernel with the project's initramfs in a
2-vCPU VM with ``interrupts: direct`` on CPUs 2-3, booted by ``-kernel`` (no
EL3: the hypervisor's events are Group 0 FIQs), beside an ordinary
bare-metal VM on CPU 0 (tests/configs/direct-linux.yaml). One boot, host
time as tests/qemu/test_linux.py (no ``-icount``: the figures asserted are
counts); its /init prints /proc/interrupts before and after a phase that
arms the passthrough RTC's alarm and pipes data between processes pinned
to the two CPUs (wake-ups: IPIs both ways)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bulkhead.run.backend import RunOptions
from bulkhead.run.runner import RunResult, run

pytestmark = pytest.mark.qemu

ROOT = Path(__file__).resolve().parents[2]
ARTEFACTS = ROOT / "artefacts" / "linux"
IRQ_RE = re.compile(r"\s*(\w+):\s+(\d+)\s+(\d+)\s+(.*)")


@pytest.fixture(scope="module")
def boot() -> RunResult:
    assert (ARTEFACTS / "Image").is_file(), "run scripts/setup.sh first (Linux artefacts)"
    res = run(ROOT / "tests" / "configs" / "direct-linux.yaml",
              RunOptions(timeout=240, out=ROOT / "build" / "qemu-tests" / "direct-linux"))
    assert not res.timed_out, res.output[-4000:]
    return res


def interrupts(res: RunResult, when: str) -> dict[str, tuple[int, int, str]]:
    """/proc/interrupts as the guest printed it after "bulkhead-irqs: <when>":
    row (the Linux IRQ number or IPIn) -> (count on CPU0, on CPU1, the rest)."""
    lines = res.lines("linux")
    start = lines.index(f"bulkhead-irqs: {when}") + 2  # past the CPU0 CPU1 header
    out: dict[str, tuple[int, int, str]] = {}
    for line in lines[start:]:
        m = IRQ_RE.fullmatch(line)
        if not m:
            break
        out[m[1]] = (int(m[2]), int(m[3]), m[4])
    assert out, lines[start - 2:]
    return out


def row(table: dict[str, tuple[int, int, str]], name: str) -> tuple[int, int]:
    """The counts of the row whose description ends with name (arch_timer, rtc-pl031)."""
    (hit,) = [(a, b) for a, b, rest in table.values() if rest.split()[-1] == name]
    return hit


def ipis(table: dict[str, tuple[int, int, str]]) -> tuple[int, int]:
    rows = [(a, b) for k, (a, b, _) in table.items() if k.startswith("IPI")]
    return sum(a for a, _ in rows), sum(b for _, b in rows)


def test_linux_direct_boots_on_its_physical_cpus(boot: RunResult) -> None:
    """The kernel reads its CPUs' physical MPIDRs (2 and 3: "Booting Linux on
    physical CPU", the secondary started by the virtual PSCI's CPU_ON) and
    finds them in its device tree; its GICv3 driver takes every trigger it
    sets (its spare interrupts are edge in the tree, as the hypervisor keeps
    them); both CPUs take the hypervisor's events as Group 0 FIQs."""
    linux = boot.lines("linux")
    text = "\n".join(linux)
    assert any(ln.endswith("Booting Linux on physical CPU 0x0000000002 [0x410fd034]") for ln in linux), text
    assert any(ln.endswith("CPU1: Booted secondary processor 0x0000000003 [0x410fd034]") for ln in linux), text
    assert "bulkhead-dt: cpu@2 cpu@3" in linux, text
    assert not [ln for ln in linux if "MPIDR" in ln or "device node" in ln], text
    assert "bulkhead-linux: userspace reached" in linux and "bulkhead-linux: cpus online 0-1" in linux, text
    assert not [ln for ln in linux if "genirq:" in ln or "secure or misconfigured" in ln], text
    hyp = [ln.removeprefix("[bulkhead] ") for ln in boot.hyp_lines()]
    for cpu in (2, 3):
        assert f"cpu {cpu}: interrupts direct, the hypervisor's as Group 0 FIQs" in hyp, hyp


def test_linux_direct_takes_timer_ipis_and_device_with_no_exit(boot: RunResult) -> None:
    """Between the two looks each CPU's virtual timer (PPI 27) and IPIs
    rose, the rescheduling IPI (SGI 0, the guest's: the hypervisor's kick
    is SGI 15 in FIQ mode) reached both CPUs, the passthrough RTC's alarm
    (SPI 34) was taken, no SGI write was dropped, and the hypervisor's
    exit counters of the VM's CPUs (printed at power-off, before its
    kicks) show no exit for an interrupt over the VM's whole life, while
    its traps (MMIO, hypercalls) were counted."""
    before, after = interrupts(boot, "before"), interrupts(boot, "after")
    t0, t1 = row(before, "arch_timer"), row(after, "arch_timer")
    i0, i1 = ipis(before), ipis(after)
    r0, r1 = row(before, "rtc-pl031"), row(after, "rtc-pl031")
    resched = after["IPI0"][:2]
    total = sum(a + b for a, b, _ in after.values())
    exits = boot.direct_exits()["linux"]
    print(f"timer {t0} -> {t1}, IPIs {i0} -> {i1}, rescheduling {resched}, rtc {r0} -> {r1}, "
          f"interrupts {total}, exits {exits}")
    assert t1[0] > t0[0] and t1[1] > t0[1], (t0, t1)
    assert i1[0] > i0[0] and i1[1] > i0[1], (i0, i1)
    assert resched[0] > 0 and resched[1] > 0, after
    assert sum(r1) == sum(r0) + 1, (r0, r1)
    assert boot.sgi_dropped() == {"linux": 0}, boot.hyp_lines()
    assert exits["irq_exits"] == 0 and exits["exits"] > 0, exits
    assert total > 1000, after


def test_emulated_neighbour_runs_to_completion(boot: RunResult) -> None:
    """The ordinary VM on CPU 0 ticks through its list registers meanwhile,
    and both VMs power off cleanly."""
    assert boot.lines("rt")[-1] == "ticker: PASS (40 ticks)", boot.output[-4000:]
    hyp = [ln.removeprefix("[bulkhead] ") for ln in boot.hyp_lines()]
    assert "vm linux: off (clean)" in hyp and "vm rt: off (clean)" in hyp, hyp
    assert "all VMs off: clean=2 stopped=0" in hyp, hyp
    assert not [ln for ln in hyp if "PANIC" in ln or "fault" in ln], hyp
    assert boot.clean, boot.reason
