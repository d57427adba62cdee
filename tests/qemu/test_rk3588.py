# SPDX-License-Identifier: Apache-2.0
"""The RK3588 QEMU test platform (platforms/rk3588-qemu.yaml): the RK3588's
eight CPUs typed Cortex-A55 (CPUs 0-3) and Cortex-A76 (4-7) with their
per-core-type bandwidth models and DSU, on QEMU virt with eight cortex-a76
models (docs/boards/rk3588.md "On QEMU"). QEMU models no caches, memory
events or DSU: regulation runs on the per-core-type fallback (CPU_CYCLES)
and the DSU's way partitioning is refused.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import test_bandwidth as tb

from bulkhead.run.backend import RunOptions
from bulkhead.run.runner import RunResult, run

pytestmark = pytest.mark.qemu

ROOT = Path(__file__).resolve().parents[2]


def boot(config: str, timeout: float = 60.0) -> RunResult:
    return run(tb.CONFIGS / config, RunOptions(timeout=timeout, icount=0, out=ROOT / "build" / "qemu-tests" / config[:-5]))


def test_hello_on_an_a76() -> None:
    res = boot("rk3588-hello.yaml", timeout=60)
    tb.check_clean(res)
    assert res.lines("hello")[-1] == "hello: PASS", tb.describe(res)
    assert "Bulkhead 0.1.0 on rk3588-qemu (board qemu-virt)" in res.output, tb.describe(res)


def test_smp_across_the_two_core_types() -> None:
    """One VM on two typed-A55 and two A76 CPUs (mixed_core_types: true):
    PSCI CPU_ON of each and SGIs between all of them."""
    res = boot("rk3588-smp.yaml", timeout=60)
    tb.check_clean(res)
    lines = res.lines("smp")
    for i in range(4):
        assert f"smp: vcpu {i} done (sent 5, received 5 SGIs)" in lines, tb.describe(res)
    assert lines[-1] == "smp: PASS (4 vCPUs)", tb.describe(res)


def test_regulation_per_core_type_fallback() -> None:
    """vCPU 0 on a typed A55 (L3D_CACHE_ALLOCATE, 0x29), vCPU 1 on an A76
    (L2D_CACHE_WR, 0x51): QEMU counts neither, so each CPU says which event
    of its core type it lacks and counts CPU_CYCLES; each vCPU, measured
    alone under -icount 0, is held to its 300000-event share per 1 ms period
    within one 5 us look plus the skid."""
    res = boot("rk3588-bw.yaml", timeout=180)
    tb.check_clean(res)
    hyp = res.hyp_lines()
    for vcpu, event in ((0, 0x29), (1, 0x51)):
        assert (f"[bulkhead] bw: vm bw: vCPU {vcpu}: this CPU does not count its core type's event "
                f"0x{event:x} (PMCEID); counting the platform's fallback event 0x11 instead, looking "
                "every 5 us") in hyp, tb.describe(res)
    share, period = 300000, 1000000
    st = tb.stats(res)
    for vcpu in (0, 1):
        segs = tb.segments(res, vcpu=vcpu)
        assert len(segs) >= 10, tb.describe(res)
        for run_ns, stall_ns, _ in segs:
            assert share - tb.ENTRY_NS <= run_ns <= share + tb.POLL_NS + tb.SKID_NS, (vcpu, run_ns, tb.describe(res))
            assert abs(run_ns + stall_ns - period) <= tb.STALL_NS, (vcpu, run_ns, stall_ns, tb.describe(res))
        s = st[f"vcpu{vcpu}"]
        assert share <= s["max"] <= share + tb.POLL_NS + tb.SKID_EVENTS + tb.OUTPUT_EVENTS, tb.describe(res)
        assert s["throttles"] >= len(segs), tb.describe(res)


def test_linux_on_both_core_types() -> None:
    """Debian's kernel on a typed-A55 and an A76 CPU to userspace, beside a
    bare-metal ticker on CPU 7."""
    assert (ROOT / "artefacts" / "linux" / "Image").is_file(), "run scripts/setup.sh first (Linux artefacts)"
    res = boot("rk3588-linux.yaml", timeout=300)
    tb.check_clean(res)
    linux = res.lines("linux")
    for line in ("bulkhead-linux: userspace reached", "bulkhead-linux: cpus online 0-1",
                 "bulkhead-linux: powering off"):
        assert line in linux, tb.describe(res)
    assert any("smp: Brought up 1 node, 2 CPUs" in line for line in linux), tb.describe(res)
    assert res.lines("rt")[-1] == "ticker: PASS (10 ticks)", tb.describe(res)


def test_dsu_partitions_refused_without_a_dsu() -> None:
    """check accepts l3_ways (the platform declares the RK3588's DSU), but
    QEMU's cortex-a76 lists no L3 in CLIDR_EL1: the hypervisor says so and
    starts no VM."""
    res = boot("rk3588-dsu.yaml", timeout=60)
    assert not res.clean, tb.describe(res)
    assert ("dsu: the config gives VMs L3 ways (DSU way partitioning), but this CPU has no DSU L3 "
            "(MIDR_EL1 414fd0b1, CLIDR_EL1 82000023: no unified level-3 cache): refusing to start "
            "the VMs") in res.output, tb.describe(res)
    assert not res.lines("rt") and not res.lines("be"), tb.describe(res)
