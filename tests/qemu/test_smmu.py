# SPDX-License-Identifier: Apache-2.0
"""Issue #25: the SMMUv3 driver on QEMU `virt,iommu=smmuv3` (docs/dma.md).

Every qemu-virt config now runs with the platform's SMMUv3 driven: an
ordinary three-VM config boots with the SMMU probed (its ID registers as
QEMU's model reports them), brought up with every stream aborting, and all
VMs run as before. With ``dma_isolation: none`` the SMMU is left off. The
end-to-end DMA tests (a PCIe function attacking another VM) are PCIe
passthrough's; the driver's fault path and programming sequence are tested
against a register model on the host (tests/host/test_smmuv3.c).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from test_core import assert_clean, describe

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_smmu_up_with_an_ordinary_config(boot: Any) -> None:
    res = boot("three-vms.yaml")
    hyp = assert_clean(res, ["hello", "smp", "ticker"])
    probe = [m for m in (re.fullmatch(
        r"smmu smmu0: SMMUv3 at 9050000: IDR0 ([0-9a-f]+) \(S2P (\d) S1P \d COHACC \d VMID16 \d ST_LEVEL (\d)\), "
        r"IDR1 ([0-9a-f]+) \(SIDSIZE (\d+)\), OAS (\d+) bits", line) for line in hyp) if m]
    assert len(probe) == 1, describe(res)
    idr0, s2p, st_level, idr1, sidsize, oas = probe[0].groups()
    # QEMU's model (hw/arm/smmuv3.c smmuv3_init_regs):
    # stage 2, two-level stream tables, 16-bit stream IDs, 44-bit output
    assert (s2p, st_level, sidsize, oas) == ("1", "1", "16", "44"), describe(res)
    assert int(idr0, 16) & 1 and (int(idr1, 16) & 0x3F) == 16
    assert ("smmu smmu0: up: linear stream table of 2 STEs (stream IDs < 0x2), command queue 64, "
            "event queue 256 entries, unknown streams abort (GBPA.ABORT, invalid STEs)") in hyp, describe(res)
    # brought up before the first VM ran
    assert hyp.index(next(line for line in hyp if line.startswith("smmu smmu0: up"))) < \
        hyp.index(next(line for line in hyp if "first guest instruction" in line)), describe(res)
    assert res.lines("hello")[-1] == "hello: PASS", describe(res)
    assert res.lines("ticker")[-1] == "ticker: PASS (5 ticks)", describe(res)


def test_dma_isolation_none_leaves_the_smmu_off(capsys: pytest.CaptureFixture[str]) -> None:
    """Also `bulkhead run --json`: the run's end and its (here empty) DMA fault counts."""
    from bulkhead import cli

    out = REPO_ROOT / "build" / "qemu-tests" / "smmu-off"
    assert cli.main(["run", str(REPO_ROOT / "tests" / "configs" / "smmu-off.yaml"), "--json", "--out", str(out),
                     "--timeout", "60"]) == 0
    stdout, console = capsys.readouterr()
    assert json.loads(stdout) == {"clean": True, "timed_out": False, "reason": "", "dma_faults": {},
                                  "sgi_dropped": {}, "direct_exits": {}}, console
    assert "[hello] hello: PASS" in console and "[bulkhead] vm hello: off (clean)" in console, console
    assert "[bulkhead] smmu " not in console, console


def test_zynqmp_smmu_not_modelled_stops_the_boot(boot: Any) -> None:
    """A VM owns devices behind the ZynqMP's SMMU-500, which upstream QEMU
    does not model: the hypervisor refuses to run it unconfined."""
    res = boot("zcu102-smmu.yaml")
    assert not res.clean and not res.timed_out, describe(res)
    assert ("[bulkhead] PANIC: smmu smmu: cannot isolate DMA: no stage-2 translation (sIDR0.S2TS) (0x20 = 0x0); "
            "stopping the boot") in res.hyp_lines(), describe(res)
    assert res.lines("io") == [], describe(res)


def test_recoloring_a_vm_with_unconfined_dma_is_refused(console_script: Any) -> None:
    """#32 item 1: without an SMMU (dma_isolation: none) a VM that drives a
    DMA-capable device is not recolored (its device would keep writing to the
    old frames, which go back to the spare memory); a VM without one is."""
    steps = [
        (b"[plain] tick 3/30", b"\x14rplain 8-11\r"),
        (b"recolor: vm plain: ", b"\x14rio 8-11\r"),
        (b"recolor: vm io: ", b""),
    ]
    text = console_script("recolor-dma.yaml", steps, timeout=120)
    hyp = [line.removeprefix("[bulkhead] ") for line in text.splitlines() if line.startswith("[bulkhead] ")]
    assert any(re.fullmatch(r"recolor: vm plain: LLC 8-11 \(by console\): 256 of 256 pages moved .*", line)
               for line in hyp), text
    assert ("recolor: vm io: refused (by console): it drives a DMA-capable device no SMMU confines "
            "(dma_isolation: none): the device would keep writing to the old frames") in hyp, text
    assert "[io] ticker: PASS (30 ticks)" in text and "[plain] ticker: PASS (30 ticks)" in text, text


def test_recoloring_moves_the_devices_view_with_the_vm(console_script: Any) -> None:
    """#32 item 1 with an SMMU: a colored VM owning QEMU's edu (a PCI
    function behind the SMMUv3) moves a verified 4 KiB buffer through it,
    is recolored from the console (its pages and stage-2 tables move, its
    stream aborts during the move and is then pointed at the new tables),
    and moves the buffer again, now on other frames: the data arrives, and
    no DMA fault is recorded."""
    steps = [
        (b"edudma: waiting for the recoloring", b"\x14d"),  # Ctrl-T d: the DMA streams
        (b"of stream IDs no VM owns", b"\x14rdev 8-11\r"),
        (b"edudma: PASS (recolor)", b""),
    ]
    text = console_script("recolor-dma-smmu.yaml", steps, timeout=180)
    lines = text.splitlines()
    dev = [line.removeprefix("[dev] ") for line in lines if line.startswith("[dev] ")]
    hyp = [line.removeprefix("[bulkhead] ") for line in lines if line.startswith("[bulkhead] ")]
    assert "edudma: PASS (recolor)" in dev, text
    assert any(line.startswith("edudma: legit before-recolor ok bytes=4096") for line in dev), text
    assert any(line.startswith("edudma: legit after-recolor ok bytes=4096") for line in dev), text
    moved = [m for line in dev if (m := re.fullmatch(
        r"edudma: recolored llc f -> f00, buffer pa ([0-9a-f]+) -> ([0-9a-f]+)", line))]
    assert len(moved) == 1 and moved[0].group(1) != moved[0].group(2), text
    assert (int(moved[0].group(2), 16) >> 12) & 0xF in range(8, 12), text  # a frame of LLC 8-11
    assert any(re.fullmatch(r"recolor: vm dev: LLC 8-11 \(by console\): 512 of 512 pages moved .*", line)
               for line in hyp), text
    assert "dma: vm dev: device edu@00:01.0: smmu smmu0 stream 0x8 on its stage 2 (VMID 1)" in hyp, text
    assert "smmu smmu0: SMMUv3 at 9050000" in hyp, text  # Ctrl-T d
    assert "dma: vm dev: device edu@00:01.0: smmu smmu0 stream 0x8 (on_dma_fault abort-device): 0 fault(s)" in hyp, text
    assert "dma: 0 fault(s) of stream IDs no VM owns" in hyp, text
    assert not [line for line in hyp if "DMA fault at" in line or "PANIC" in line], text
    assert "vm dev: 0 DMA fault(s) from 1 device(s)" in hyp and "vm dev: DMA fault(s) of edu@00:01.0: 0" in hyp, text


def test_stop_vm_policy(boot: Any) -> None:
    """A DMA fault of a device with `on_dma_fault: stop-vm` is reported and stops
    its VM through the ordinary stop path (its streams abort for good); the
    neighbour is unaffected."""
    res = boot("dma-stop-vm.yaml", timeout=120)
    hyp = [line.removeprefix("[bulkhead] ") for line in res.hyp_lines()]
    assert any(line.startswith("edudma: legit polled ok bytes=4096") for line in res.lines("attacker")), describe(res)
    fault = [line for line in hyp if re.fullmatch(
        r"vm attacker: device edu@00:0\d\.0: DMA fault at IPA 0x100000000 \(write\): F_TRANSLATION", line)]
    assert len(fault) == 1, describe(res)
    assert "vm attacker: stopped (DMA fault, on_dma_fault: stop-vm)" in hyp, describe(res)
    assert hyp.index(fault[0]) < hyp.index("vm attacker: stopped (DMA fault, on_dma_fault: stop-vm)"), describe(res)
    assert any(re.fullmatch(r"vm attacker: [1-9]\d* DMA fault\(s\) from 1 device\(s\)", line) for line in hyp), \
        describe(res)
    assert any(re.fullmatch(r"vm attacker: DMA fault\(s\) of edu@00:0\d\.0: [1-9]\d*", line) for line in hyp), \
        describe(res)
    assert "edudma: PASS (attack)" not in res.lines("attacker"), describe(res)
    assert res.lines("ticker")[-1] == "ticker: PASS (10 ticks)", describe(res)
    assert "all VMs off: clean=1 stopped=1" in hyp, describe(res)
