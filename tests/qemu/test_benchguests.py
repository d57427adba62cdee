# SPDX-License-Identifier: Apache-2.0
"""The benchmark guests under the hypervisor, each checking its own work.

Timings under QEMU mean nothing physical; these tests only assert what the
guests verify themselves (bytes counted, the pointer-chase permutation is a
single cycle over every line, the stride sweep visited every step, irqlat got
every sample, the interferer stops when the benchmark is done) and that the
``result`` lines the experiment runner parses are consistent.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from bulkhead.experiment.results import parse_result_line

pytestmark = pytest.mark.qemu


def results(lines: list[str], bench: str) -> list[dict[str, str]]:
    found = [parse_result_line(line) for line in lines]
    return [r for r in found if r is not None and r.get("bench") == bench]


def no_fail(lines: list[str]) -> bool:
    return not [line for line in lines if "FAIL" in line]


def test_bandwidth_modes(boot: Callable[..., Any]) -> None:
    r = boot("bench-modes.yaml")
    assert r.clean, r.reason + "\n" + r.output
    for vm, mode, cpus in (("bw-read", "read", 2), ("bw-write", "write", 1), ("bw-rmw", "rmw", 1)):
        lines = r.lines(vm)
        assert no_fail(lines), lines
        assert lines[0] == f"bandwidth: {cpus} vCPUs, mode {mode}, 256 KiB per vCPU, 4 iterations"
        rows = results(lines, "bandwidth")
        assert sorted(int(x["cpu"]) for x in rows) == list(range(cpus))
        for row in rows:
            assert row["mode"] == mode and row["size"] == "262144" and row["iterations"] == "4"
            assert int(row["lines"]) == 4 * 262144 // 64
            assert int(row["bytes"]) == int(row["lines"]) * 64
            assert float(row["mbps"]) > 0 and float(row["ns_per_line"]) > 0
            # mbps and ns_per_line are two views of the same measurement.
            assert float(row["mbps"]) == pytest.approx(64e3 / float(row["ns_per_line"]), rel=1e-3)
        assert lines[-1] == f"bandwidth: PASS ({cpus} vCPUs, {cpus * 4 * 262144} bytes counted)"


def test_latency_stride_irqlat(boot: Callable[..., Any]) -> None:
    r = boot("bench-probes.yaml")
    assert r.clean, r.reason + "\n" + r.output

    lines = r.lines("latency")
    assert no_fail(lines), lines
    assert "latency: permutation is a single cycle over 8192 lines" in lines
    (row,) = results(lines, "latency")
    assert row["lines"] == "8192" and row["accesses"] == str(2 * 8192)
    assert lines[-1] == "latency: PASS (16384 accesses)"

    lines = r.lines("stride")
    assert no_fail(lines), lines
    steps = [x for x in results(lines, "stride") if x["kind"] == "step"]
    assert [int(x["step"]) for x in steps] == [64 << i for i in range(11)]  # 64 B .. 64 KiB
    assert all(x["lines"] == str(256 * 1024 // 64) for x in steps)
    (summary,) = [x for x in results(lines, "stride") if x["kind"] == "summary"]
    assert summary["steps"] == "11"
    slowest = min(float(x["mbps"]) for x in steps)
    (at_slowest,) = [x for x in steps if x["step"] == summary["slowest_step"]]
    assert float(at_slowest["mbps"]) == pytest.approx(slowest, abs=0.002)
    assert float(summary["min_mbps"]) == pytest.approx(slowest, abs=0.002)
    assert lines[-1] == "stride: PASS (11 steps)"

    for vm, samples, wait in (("irqlat", 200, "wfi"), ("irqlat-busy", 100, "busy")):
        lines = r.lines(vm)
        assert no_fail(lines), lines
        (row,) = results(lines, "irqlat")
        assert row["samples"] == str(samples) and row["wait"] == wait
        lo, p50, p99, hi = (int(row[k]) for k in ("min_ns", "p50_ns", "p99_ns", "max_ns"))
        assert 0 <= lo <= p50 <= p99 <= hi
        assert lo <= float(row["mean_ns"]) <= hi
        assert lines[-1] == f"irqlat: PASS ({samples} samples)"


def test_interferer_stops_when_benchmark_done(boot: Callable[..., Any]) -> None:
    r = boot("bench-sync.yaml")
    assert r.clean, r.reason + "\n" + r.output
    bench = r.lines("bench")
    assert no_fail(bench), bench
    assert "bandwidth: sync: 1 of 1 interfering VMs ready" in bench
    assert bench[-1] == "bandwidth: PASS (1 vCPUs, 2097152 bytes counted)"

    interf = r.lines("interf")
    assert no_fail(interf), interf
    assert re.fullmatch(r"interferer: 2 vCPUs, [0-9]+ KiB per vCPU, 0 s", interf[0]), interf
    assert re.fullmatch(r"interferer: mode write, footprint exceed, llc [0-9]+ KiB, sync on", interf[1])
    rows = results(interf, "interferer")
    assert sorted(x["cpu"] for x in rows) == ["0", "1"]
    for row in rows:
        # footprint exceed: twice the LLC per vCPU, i.e. more than the LLC.
        assert int(row["bytes"]) == int(row["lines"]) * 64 and int(row["lines"]) > 0
    assert re.fullmatch(r"interferer: PASS \(2 vCPUs, until done, [0-9]+ ms\)", interf[-1]), interf
