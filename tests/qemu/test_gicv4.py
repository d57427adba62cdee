# SPDX-License-Identifier: Apache-2.0
"""The GICv4 platform variant (platforms/qemu-virt-gicv4.yaml: QEMU virt with
`gic-version=4`, docs/interrupts.md "GICv4"): today's dual example (an SMP
Linux VM beside a bare-metal ticker) boots and ends cleanly on a GICv4's CPU
interface and redistributors, whose stride (four frames) is not what the
VMs see (two)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bulkhead.run.backend import RunOptions
from bulkhead.run.runner import run

ROOT = Path(__file__).resolve().parents[2]
LINUX = ROOT / "artefacts" / "linux" / "Image"


def test_dual_example_boots_on_a_gicv4(tmp_path: Path) -> None:
    if not LINUX.exists():
        pytest.skip("needs the Linux artefacts (scripts/setup.sh linux)")
    text = (ROOT / "configs" / "dual.yaml").read_text()
    assert "platform: qemu-virt\n" in text
    config = tmp_path / "dual-gicv4.yaml"
    config.write_text(text.replace("platform: qemu-virt\n", "platform: qemu-virt-gicv4\n")
                      .replace("../artefacts/", f"{ROOT}/artefacts/"))
    res = run(config, RunOptions(timeout=240, icount=None, out=ROOT / "build" / "qemu-tests" / "gicv4-dual"))
    assert any("gic-version=4" in a for a in res.argv), res.argv
    assert res.clean, f"{res.reason}\n{res.output[-3000:]}"
    assert "PANIC" not in res.output
    assert "[bulkhead] Bulkhead" in res.output and "on qemu-virt-gicv4 (board qemu-virt)" in res.output
    # both vCPUs found their redistributors (two frames apart in the VM's view)
    assert "[linux] bulkhead-linux: userspace reached" in res.output, res.output[-3000:]
    assert "smp: Brought up 1 node, 2 CPUs" in res.output, res.output[-3000:]
    assert "[rt] ticker: PASS (10 ticks)" in res.output, res.output[-3000:]
