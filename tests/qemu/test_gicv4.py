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


def test_a_function_reaches_the_its_doorbell_and_nothing_else_of_the_its(tmp_path: Path) -> None:
    """A VM's function shows MSI where the platform has an ITS: the guest
    finds the edu's MSI capability, a foreign message address is refused
    and logged, the doorbell, the data and the enable reach the function,
    Multiple Message Enable stays within the 1 vector it is capable of. The
    SMMU's view of the VM maps the ITS doorbell page (GITS_TRANSLATER, IPA
    = PA 0x08090000) for its MSI writes (docs/dma.md "MSI"): an edu's write
    there translates; one at the ITS's control frame (0x08080000) is a DMA
    fault, as before the doorbell was mapped was the first."""
    out = ROOT / "build" / "qemu-tests" / "gicv4-doorbell"
    out.mkdir(parents=True, exist_ok=True)
    config = out / "doorbell.yaml"
    config.write_text("""\
platform: qemu-virt-gicv4
vms:
  - name: dev
    cpus: [0]
    memory:
      - {ipa: 0x40000000, size: 2M}
    guest: edudma
    pci: [{qemu: edu}]
    params: {mode: high, addr0: 0x08090000, addr1: 0x08080000, msi: 0x08090040}
""")
    res = run(config, RunOptions(timeout=120, icount=None, out=out / "build"))
    text = res.output
    assert not res.timed_out and "PANIC" not in text, text[-3000:]
    hyp = [ln.removeprefix("[bulkhead] ") for ln in res.hyp_lines()]
    assert "vm dev: pci 00:01.0 edu: reset by holding it off (no FLR); MSI/MSI-X shown" in hyp, text[-3000:]
    assert any(ln.startswith("vm dev: the SMMU's view of its memory: RAM and shared memory, no device but the "
                             "ITS doorbell") for ln in hyp), text[-3000:]
    dev = res.lines("dev")
    # QEMU's edu: a conventional PCI function whose one capability is a 64-bit MSI of 1 vector
    assert "edudma: status 10" in dev and "edudma: cap 5 at 40" in dev, text[-3000:]
    assert "edudma: msi address 0 after a foreign one" in dev, text[-3000:]
    assert ("vm dev: pci 00:01.0 edu: MSI address write 40000000 at 44 refused: only 0 or the doorbell "
            "8090040 (1 refused)") in hyp, text[-3000:]
    assert "edudma: msi address 8090040 after the doorbell" in dev, text[-3000:]
    assert "edudma: msi data 21 control 81" in dev, text[-3000:]
    assert "edudma: high write dst=8090000 done=1" in dev, text[-3000:]
    assert "edudma: high addresses=2" in dev and "edudma: PASS (high)" in dev, text[-3000:]
    faults = [ln for ln in hyp if "DMA fault at" in ln]
    assert faults and all(ln.startswith("vm dev: device edu@00:01.0: DMA fault at IPA 0x8080000 (write)")
                          for ln in faults), text[-3000:]
    assert res.clean, text[-3000:]
