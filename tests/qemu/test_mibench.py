# SPDX-License-Identifier: Apache-2.0
"""The mibench kernels bare-metal under the hypervisor give the same
checksums as the same sources built for and run on the build host
(guests/mibench/linux ``host``): the same inputs, the same work, whatever the
compiler and the machine. Timings under QEMU mean nothing physical; only
their consistency is checked."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bulkhead.experiment.results import parse_result_line

pytestmark = pytest.mark.qemu

ROOT = Path(__file__).resolve().parents[2]
SEED = 7  # tests/configs/mibench.yaml


def checksums(lines: list[str]) -> dict[str, str]:
    found = [parse_result_line(line) for line in lines]
    return {r["kernel"]: r["checksum"] for r in found if r is not None and r.get("bench") == "mibench"}


@pytest.fixture(scope="module")
def host_checksums(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    out = tmp_path_factory.mktemp("mibench")
    subprocess.run(["make", "-s", "-C", str(ROOT / "guests/mibench/linux"), f"O={out}", "host"],
                   check=True, capture_output=True, timeout=300)
    run = subprocess.run([str(out / "mibench-host"), "-r", str(SEED)], capture_output=True, text=True,
                         timeout=300, check=True)
    return checksums(run.stdout.splitlines())


def test_bare_metal_checksums_equal_the_host_build(boot: Callable[..., Any],
                                                   host_checksums: dict[str, str]) -> None:
    r = boot("mibench.yaml")
    assert r.clean, r.reason + "\n" + r.output
    lines = r.lines("mibench")
    assert not [line for line in lines if "FAIL" in line], lines
    assert len(host_checksums) >= 4
    assert lines[0] == f"mibench: {len(host_checksums)} kernels, size small, 2 iterations, seed {SEED}"
    assert checksums(lines) == host_checksums
    for row in (parse_result_line(line) for line in lines):
        if row is None or row.get("bench") != "mibench":
            continue
        assert row["size"] == "small" and row["iterations"] == "2"
        assert 0 < int(row["ns"]) == int(row["end_ns"]) - int(row["start_ns"])
    assert lines[-1] == f"mibench: PASS ({len(host_checksums)} kernels)"
