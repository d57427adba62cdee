# SPDX-License-Identifier: Apache-2.0
"""The bare-metal guests booted directly on QEMU at EL1 (no hypervisor).

QEMU's virt machine without virtualization=on enters the guest at EL1 with
the same RAM/UART/GIC/PL031 addresses a Bulkhead VM sees and implements PSCI
over HVC itself, so everything but the hypercalls can be checked without the
hypervisor. Parameters are passed the way the runtime accepts them when
x0 = 0: a "vm=..." block loaded at 0x40fff000.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import baremetal
import pytest

pytestmark = pytest.mark.qemu

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def guests(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("guests")
    proc = subprocess.run(
        ["make", "-C", str(REPO_ROOT / "guests"), f"O={out}", "-j4"],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def boot(guests: Path, tmp_path: Path, name: str, params: dict[str, object] | None = None,
         cpu: str = "cortex-a53") -> list[str]:
    """Boot guests/<name> on 4 CPUs; returns its console lines."""
    return baremetal.boot(guests / f"{name}.elf", tmp_path, params, cpu=cpu)


def no_fail(lines: list[str]) -> bool:
    return not [line for line in lines if "FAIL" in line or line.startswith("guest: ")]


def test_selftest(guests: Path, tmp_path: Path) -> None:
    lines = boot(guests, tmp_path, "selftest", {"cpus": 4})
    assert no_fail(lines), lines
    assert re.fullmatch(r"selftest: vcpu 0, 4 vCPUs, timer [0-9]+ Hz, hypervisor no", lines[0]), lines
    assert re.fullmatch(r"selftest: PASS \([0-9]+ checks\)", lines[-1]), lines


def test_hello_without_hypervisor(guests: Path, tmp_path: Path) -> None:
    # Hypercalls are UNDEFINED without EL2; the runtime turns them into -1.
    assert boot(guests, tmp_path, "hello") == [
        "hello: FAIL (no hypervisor: BH_HC_VERSION returned -1, magic 0x0)",
    ]


def test_ticker(guests: Path, tmp_path: Path) -> None:
    lines = boot(guests, tmp_path, "ticker", {"ticks": 5, "period_ms": 50})
    assert lines == ["ticker: 5 ticks every 50 ms"] + [f"tick {i}/5" for i in range(1, 6)] + [
        "ticker: PASS (5 ticks)",
    ]


def test_ticker_defaults(guests: Path, tmp_path: Path) -> None:
    lines = boot(guests, tmp_path, "ticker")
    assert lines[0] == "ticker: 10 ticks every 100 ms"
    assert lines[-1] == "ticker: PASS (10 ticks)"


@pytest.mark.parametrize("cpus", [2, 4])
def test_smp(guests: Path, tmp_path: Path, cpus: int) -> None:
    lines = boot(guests, tmp_path, "smp", {"cpus": cpus, "rounds": 5})
    assert no_fail(lines), lines
    assert lines[0] == f"smp: {cpus} vCPUs, PSCI version 0x10001"
    for cpu in range(1, cpus):
        assert f"smp: vcpu {cpu} up (mpidr 0x{cpu:x}, ctx 0x{0x5350000 + cpu:x})" in lines
    for cpu in range(cpus):
        assert f"smp: vcpu {cpu} done (sent 5, received 5 SGIs)" in lines
    assert lines[-1] == f"smp: PASS ({cpus} vCPUs)"


def test_interferer(guests: Path, tmp_path: Path) -> None:
    lines = boot(guests, tmp_path, "interferer", {"cpus": 2, "seconds": 1, "size": "1M"})
    assert lines[0] == "interferer: 2 vCPUs, 1024 KiB per vCPU, 1 s"
    for cpu in range(2):
        assert len([x for x in lines if re.fullmatch(rf"interferer: vcpu {cpu}: [0-9]+ MB/s", x)]) == 1
        assert [x for x in lines if re.fullmatch(rf"interferer: vcpu {cpu} done \([0-9]+ MB written\)", x)]
    assert lines[-1] == "interferer: PASS (2 vCPUs, 1 s)"


def test_rtc(guests: Path, tmp_path: Path) -> None:
    lines = boot(guests, tmp_path, "rtc")
    assert no_fail(lines), lines
    assert re.fullmatch(r"rtc: time [1-9][0-9]*", lines[0]), lines
    assert [re.sub(r" at [0-9]+$", "", x) for x in lines[1:3]] == ["rtc: interrupt 1/2", "rtc: interrupt 2/2"]
    assert lines[-1] == "rtc: PASS (2 interrupts)"


def test_probe_data_abort(guests: Path, tmp_path: Path) -> None:
    # Only the data-abort probe behaves as under the hypervisor: 0x80000000
    # is past QEMU's 1 GiB of RAM, so the store takes an external abort.
    lines = boot(guests, tmp_path, "probe")
    aborts = [x for x in lines if x.startswith("probe: abort caught ")]
    assert aborts and re.fullmatch(r"probe: abort caught esr=0x96[0-9a-f]{6} far=0x80000000", aborts[0]), lines
    assert lines[-1].startswith("probe: FAIL ") and "data_abort" not in lines[-1]


def test_doorbell_without_hypervisor(guests: Path, tmp_path: Path) -> None:
    assert boot(guests, tmp_path, "doorbell", {"role": "pong"}) == ["doorbell: FAIL (no hypervisor)"]


def test_sgilat(guests: Path, tmp_path: Path) -> None:
    """The virtual SGI latency guest (bench/hotpaths.py) on QEMU's own GIC:
    every SGI answered, the samples in order (min <= mean <= max, > 0)."""
    lines = boot(guests, tmp_path, "sgilat", {"cpus": 2, "samples": 20, "wait": "busy"})
    assert lines[-1] == "sgilat: PASS (20 samples)", lines
    m = re.fullmatch(r"result bench=sgilat samples=20 wait=busy min_ns=(\d+) mean_ns=([\d.]+) max_ns=(\d+)",
                     lines[-2])
    assert m, lines
    assert 0 < int(m[1]) <= float(m[2]) <= int(m[3]), lines


def test_mibench_params(guests: Path, tmp_path: Path) -> None:
    # Bad parameters: a clear FAIL, nothing run (the checksums: tests/qemu/test_mibench_run.py).
    assert boot(guests, tmp_path, "mibench", {"kernels": "crc,nosuch"}) == [
        "mibench: FAIL (unknown kernel in 'crc,nosuch')"]
    assert boot(guests, tmp_path, "mibench", {"size": "huge"}) == [
        "mibench: FAIL (unknown size 'huge'; expected small or large)"]
    lines = boot(guests, tmp_path, "mibench", {"kernels": "crc,insertsort", "size": "large", "iterations": 2})
    assert no_fail(lines), lines
    assert lines[0] == "mibench: 2 kernels, size large, 2 iterations, seed 1"
    assert [x.split()[2] for x in lines if x.startswith("result ")] == ["kernel=crc", "kernel=insertsort"]
    assert "mibench: crc: n=4194304, 4096 KiB, " in "\n".join(lines)
    assert lines[-1] == "mibench: PASS (2 kernels)"
