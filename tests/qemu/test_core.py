# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests: the hypervisor boots the configs in tests/configs/ under
QEMU and the bare-metal guests report what they saw.

Each test kills QEMU after 60 s (the runner does). Console lines are asserted
exactly; see each guest's source for the lines it prints.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

pytestmark = pytest.mark.qemu


def strip_hyp(line: str) -> str:
    prefix = "[bulkhead] "
    return line[len(prefix):] if line.startswith(prefix) else line


def esr_ec(esr_hex: str) -> int:
    return (int(esr_hex, 16) >> 26) & 0x3F


def find(lines: list[str], pattern: str) -> list[re.Match[str]]:
    """The full-line matches of ``pattern`` in ``lines``."""
    rx = re.compile(pattern)
    return [m for m in (rx.fullmatch(line) for line in lines) if m]


def describe(res: Any) -> str:
    return f"reason: {getattr(res, 'reason', '?')}\n--- output ---\n{res.output}"


def assert_clean(res: Any, vms: list[str]) -> list[str]:
    """The run ended with every VM powered off by itself; returns the
    hypervisor's lines (prefix stripped)."""
    assert not res.timed_out, describe(res)
    hyp = [strip_hyp(line) for line in res.hyp_lines()]
    assert not [line for line in hyp if line.startswith("PANIC")], describe(res)
    for vm in vms:
        assert f"vm {vm}: off (clean)" in hyp, describe(res)
    assert f"all VMs off: clean={len(vms)} stopped=0" in hyp, describe(res)
    assert res.clean, describe(res)
    return hyp


def assert_no_fail(res: Any, vm: str) -> None:
    bad = [line for line in res.lines(vm) if "FAIL" in line or line.startswith("guest: ")]
    assert not bad, describe(res)


def assert_ticker(res: Any, vm: str, ticks: int, period_ms: int = 100) -> None:
    expected = [f"ticker: {ticks} ticks every {period_ms} ms"]
    expected += [f"tick {i}/{ticks}" for i in range(1, ticks + 1)]
    expected.append(f"ticker: PASS ({ticks} ticks)")
    assert res.lines(vm) == expected, describe(res)


@pytest.mark.farm  # also on a labgrid target (docs/farm.md)
def test_one_vm_hello(boot: Any) -> None:
    res = boot("one-hello.yaml")
    assert_clean(res, ["hello"])
    assert res.lines("hello") == [
        "hello: bulkhead ABI 1.0 (magic ok)",
        "hello: console write ok",
        "hello from hello (vm id 0, 1 vCPUs, 16 MiB)",
        "hello: PASS",
    ], describe(res)


@pytest.mark.farm  # also on a labgrid target (docs/farm.md)
def test_three_vms_on_four_cpus(boot: Any) -> None:
    res = boot("three-vms.yaml")
    assert_clean(res, ["hello", "smp", "ticker"])

    assert res.lines("hello") == [
        "hello: bulkhead ABI 1.0 (magic ok)",
        "hello: console write ok",
        "hello from hello (vm id 0, 1 vCPUs, 16 MiB)",
        "hello: PASS",
    ], describe(res)

    smp = res.lines("smp")
    assert_no_fail(res, "smp")
    assert smp[0] == "smp: 2 vCPUs, PSCI version 0x10001", describe(res)
    assert "smp: vcpu 0 up (mpidr 0x0)" in smp, describe(res)
    assert "smp: vcpu 1 up (mpidr 0x1, ctx 0x5350001)" in smp, describe(res)
    for cpu in range(2):
        assert f"smp: vcpu {cpu} done (sent 5, received 5 SGIs)" in smp, describe(res)
    assert smp[-1] == "smp: PASS (2 vCPUs)", describe(res)

    assert_ticker(res, "ticker", 5)


@pytest.mark.farm  # also on a labgrid target (docs/farm.md)
def test_smp_cpu_on(boot: Any) -> None:
    res = boot("smp.yaml")
    assert_clean(res, ["smp"])
    smp = res.lines("smp")
    assert_no_fail(res, "smp")
    assert smp[0] == "smp: 4 vCPUs, PSCI version 0x10001", describe(res)
    assert "smp: vcpu 0 up (mpidr 0x0)" in smp, describe(res)
    for cpu in range(1, 4):
        assert f"smp: vcpu {cpu} up (mpidr 0x{cpu:x}, ctx 0x{0x5350000 + cpu:x})" in smp, describe(res)
    for cpu in range(4):
        assert f"smp: vcpu {cpu} done (sent 5, received 5 SGIs)" in smp, describe(res)
    assert smp[-1] == "smp: PASS (4 vCPUs)", describe(res)
    assert len(smp) == 1 + 4 + 4 + 1, describe(res)


@pytest.mark.farm  # also on a labgrid target (docs/farm.md)
def test_doorbell_round_trip(boot: Any) -> None:
    res = boot("doorbell.yaml")
    assert_clean(res, ["ping", "pong"])
    for role in ("ping", "pong"):
        assert res.lines(role) == [
            f"doorbell: {role}: shmem 0x50000000 size 4096 irq 80 peers 1",
            "doorbell: PASS (10 round trips)",
        ], describe(res)


def test_doorbell_while_the_last_waits_in_a_list_register(boot: Any) -> None:
    """Doorbells sent while the previous one is still pending, untaken, in
    the receiver's list register (its interrupts masked): the receiver, once
    it took them and sleeps in WFI with no trap since, must be woken by the
    next doorbell at once. The hypervisor once kept them pending beside the
    list register and sent no kick for the next: pong slept to the end of
    its 1 s wait (round trip ~1,000,000 us). And the flood of 1,000 doorbells
    costs pong's CPU the one exit of the first one's kick, not one each."""
    res = boot("doorbell-stale.yaml")
    assert_clean(res, ["ping", "pong"])
    ping, pong = res.lines("ping"), res.lines("pong")
    assert ping[0] == "doorbell: ping: shmem 0x50000000 size 4096 irq 80 peers 1", describe(res)
    assert ping[-1] == pong[-1] == "doorbell: PASS (stale: 3 rings, 1 reply)", describe(res)
    rt = find(ping, r"doorbell: stale: ring 3 round trip (\d+) us")
    assert len(rt) == 1 and int(rt[0][1]) <= 500_000, describe(res)
    cost = find(pong, r"doorbell: stale: 1000 rings while masked cost (\d+) exits")
    assert len(cost) == 1 and int(cost[0][1]) <= 10, describe(res)


@pytest.mark.farm  # also on a labgrid target (docs/farm.md)
def test_isolation_probes(boot: Any) -> None:
    res = boot("isolation.yaml")
    hyp = assert_clean(res, ["probe", "ticker", "owner"])

    probe = res.lines("probe")
    assert probe[0] == "probe: bad_ipa 0x80000000 foreign_irq 34 hypervisor yes", describe(res)
    aborts = find(probe, r"probe: abort caught esr=0x([0-9a-f]+) far=0x([0-9a-f]+)")
    assert len(aborts) == 1 and esr_ec(aborts[0].group(1)) == 0x25, describe(res)
    assert "probe: foreign irq 34 isenabler=0" in probe, describe(res)
    undefs = find(probe, r"probe: undef caught esr=0x([0-9a-f]+)")
    assert len(undefs) == 1 and esr_ec(undefs[0].group(1)) == 0x00, describe(res)
    assert "probe: console write bad ipa -> -3, unknown hvc -> -1" in probe, describe(res)
    # no host physical addresses without `introspection: true` (issue #32 item 3)
    assert "probe: host addresses: ipa_info -> -4, s2_info -> -4" in probe, describe(res)
    assert probe[-1] == "probe: PASS", describe(res)

    # The hypervisor reported the stage-2 fault of the store to 0x80000000 ...
    faults = find(hyp, r"vm probe: fault vcpu=0 pc=(0x)?[0-9a-f]+ ipa=(0x)?0*80000000 "
                       r"esr=(0x)?[0-9a-f]+ \(.+\)")
    assert faults, describe(res)
    # ... and nothing about the other VMs.
    assert not [line for line in hyp if line.startswith(("vm ticker: fault", "vm owner: fault"))], describe(res)

    # The neighbours were not disturbed: every tick, and the RTC still works.
    assert_ticker(res, "ticker", 10)
    owner = res.lines("owner")
    assert_no_fail(res, "owner")
    assert owner[-1] == "rtc: PASS (2 interrupts)", describe(res)


def test_rtc_passthrough(boot: Any) -> None:
    res = boot("rtc.yaml")
    assert_clean(res, ["rtc"])
    rtc = res.lines("rtc")
    assert_no_fail(res, "rtc")
    times = find(rtc, r"rtc: time ([0-9]+)")
    assert len(times) == 1 and int(times[0].group(1)) > 0, describe(res)
    ticks = find(rtc, r"rtc: interrupt ([12])/2 at ([0-9]+)")
    assert [m.group(1) for m in ticks] == ["1", "2"], describe(res)
    assert rtc[-1] == "rtc: PASS (2 interrupts)", describe(res)


def test_runtime_selftest(boot: Any) -> None:
    res = boot("selftest.yaml")
    assert_clean(res, ["selftest"])
    lines = res.lines("selftest")
    assert_no_fail(res, "selftest")
    assert find(lines[:1], r"selftest: vcpu 0, 2 vCPUs, timer [0-9]+ Hz, hypervisor yes"), describe(res)
    assert find(lines[-1:], r"selftest: PASS \([0-9]+ checks\)"), describe(res)
