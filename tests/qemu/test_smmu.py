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
            "event queue 64 entries, unknown streams abort (GBPA.ABORT, invalid STEs)") in hyp, describe(res)
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
    assert json.loads(stdout) == {"clean": True, "timed_out": False, "reason": "", "dma_faults": {}}, console
    assert "[hello] hello: PASS" in console and "[bulkhead] vm hello: off (clean)" in console, console
    assert "[bulkhead] smmu " not in console, console
