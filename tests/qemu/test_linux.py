# SPDX-License-Identifier: Apache-2.0
"""Debian's arm64 kernel with a busybox initramfs in a 2-vCPU VM beside a
bare-metal VM (configs/dual.yaml, the demo). The artefacts come from
scripts/setup.sh; without them the test fails rather than skips."""

from __future__ import annotations

from pathlib import Path

import pytest

from bulkhead.run.backend import RunOptions
from bulkhead.run.runner import run

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTEFACTS = REPO_ROOT / "artefacts" / "linux"


@pytest.mark.parametrize("boot", ["image", "uboot"])
def test_linux_beside_baremetal(boot: str) -> None:
    """From the single image (QEMU -kernel), and through the real chain:
    Debian's U-Boot fetching the FIT over TFTP (docs/boot.md)."""
    assert (ARTEFACTS / "Image").is_file(), "run scripts/setup.sh first (Linux artefacts)"
    res = run(REPO_ROOT / "configs" / "dual.yaml", RunOptions(timeout=240,
              out=REPO_ROOT / "build" / "qemu-tests" / "dual", boot=boot))
    assert not res.timed_out, res.output
    linux = res.lines("linux")
    text = "\n".join(linux)
    # the kernel found both vCPUs and its console, and reached userspace
    assert any("smp: Brought up 1 node, 2 CPUs" in line for line in linux), text
    assert any("ttyAMA0 at MMIO 0x9000000" in line for line in linux), text
    assert "bulkhead-linux: userspace reached" in linux, text
    assert "bulkhead-linux: cpus online 0-1" in linux, text
    assert "bulkhead-linux: cpus 2" in linux, text
    assert "bulkhead-linux: powering off" in linux, text
    # the guest PMU (hypervisor/core/vpmu/vpmu.c): QEMU's 6 event counters + the cycle counter
    assert any("hw perfevents: enabled with armv8_pmuv3 PMU driver, 7 counters available" in line
               for line in linux), text
    # the bare-metal VM ran on its own CPU and console meanwhile
    rt = res.lines("rt")
    assert rt[-1] == "ticker: PASS (10 ticks)", rt
    hyp = [line.removeprefix("[bulkhead] ") for line in res.hyp_lines()]
    assert "vm linux: off (clean)" in hyp and "vm rt: off (clean)" in hyp, hyp
    assert "all VMs off: clean=2 stopped=0" in hyp, hyp
    assert not [line for line in hyp if "fault" in line or "PANIC" in line], hyp
    assert res.clean and res.returncode == 0
    if boot == "uboot":  # U-Boot ran, verified the FIT and passed its DTB
        assert "Verifying Hash Integrity ... crc32+ OK" in res.output, res.output
        assert any(line.startswith("DTB at ") for line in hyp), hyp
    else:
        assert "U-Boot" not in res.output
