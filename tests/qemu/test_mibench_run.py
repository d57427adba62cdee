# SPDX-License-Identifier: Apache-2.0
"""The mibench kernels bare-metal under the hypervisor, and as the Linux
user program in a Linux VM run by ``bulkhead experiment``, give the same
checksums as the same sources built for and run on the build host
(guests/mibench/linux ``host``): the same inputs, the same work, whatever the
compiler and the machine. Timings under QEMU mean nothing physical; only
their consistency is checked.

The Linux test appends the program built from the current sources to a copy
of the small Linux initramfs (the same /init as the workload one, into which
``scripts/setup.sh workloads`` packs it), so it never runs a stale binary;
it runs in host time (no -icount: faster, and checksums do not depend on
time). Without the Linux artefacts it fails rather than skips."""

from __future__ import annotations

import csv
import gzip
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bulkhead.experiment import spec as spec_mod
from bulkhead.experiment.execute import run_experiment
from bulkhead.experiment.results import parse_result_line

pytestmark = pytest.mark.qemu

ROOT = Path(__file__).resolve().parents[2]
SEED = 7  # tests/configs/mibench.yaml
LINUX = ROOT / "artefacts" / "linux"
OUT_ROOT = Path(os.environ.get("BULKHEAD_QEMU_TESTS_OUT") or ROOT / "build" / "qemu-tests")
LINUX_KERNELS = ("qsort", "crc")


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


LINUX_SPEC = """\
name: mibench-linux
system:
  platform: qemu-virt
  vms:
    - name: linux
      type: linux
      cpus: [0]
      memory:
        - {{ipa: 0x40000000, size: 256M}}
      kernel: {kernel}
      initrd: {initrd}
      bootargs: "console=ttyAMA0 rdinit=/init"
critical: linux
benchmarks:
  - {{name: linux-mibench, workload: mibench, args: "-r {seed} -i 2 {kernels}"}}
scenarios: [{{name: solo}}]
icount: null
timeout: 300
"""


def test_linux_program_checksums_equal_the_host_build(tmp_path: Path, host_checksums: dict[str, str]) -> None:
    for path in (LINUX / "Image", LINUX / "initrd.cpio.gz"):
        assert path.is_file(), f"{path} missing: run scripts/setup.sh workloads"
    root = tmp_path / "root"
    subprocess.run(["make", "-s", "-C", str(ROOT / "guests/mibench/linux"), f"O={root / 'bin'}", "linux"],
                   check=True, capture_output=True, timeout=300)
    archive = subprocess.run("find . | LC_ALL=C sort | cpio -o -H newc --owner=0:0 --quiet", shell=True,
                             cwd=root, check=True, capture_output=True, timeout=60).stdout
    initrd = tmp_path / "initrd.cpio.gz"
    shutil.copyfile(LINUX / "initrd.cpio.gz", initrd)
    with open(initrd, "ab") as f:  # a second archive: the kernel unpacks both into one root
        f.write(gzip.compress(archive))
    spec_path = tmp_path / "spec.yaml"
    spec_path.write_text(LINUX_SPEC.format(kernel=LINUX / "Image", initrd=initrd, seed=SEED,
                                           kernels=" ".join(LINUX_KERNELS)))
    out = OUT_ROOT / "mibench-linux"
    shutil.rmtree(out / "logs", ignore_errors=True)
    result = run_experiment(spec_mod.load(spec_path), out, report=False)
    with open(result.csv, newline="") as f:
        (row,) = list(csv.DictReader(f))
    assert row["status"] == "ok", row
    assert row["guest"] == "mibench" and row["metric"] == "ns_per_iter" and float(row["value"]) > 0, row
    with open(result.lines_csv, newline="") as f:
        lines = [r for r in csv.DictReader(f) if r["bench"] == "mibench"]
    assert [r["kernel"] for r in lines] == list(LINUX_KERNELS)
    assert {r["kernel"]: r["checksum"] for r in lines} == {k: host_checksums[k] for k in LINUX_KERNELS}
    assert all(r["iterations"] == "2" and float(r["begin_s"]) < float(r["end_s"]) for r in lines), lines
