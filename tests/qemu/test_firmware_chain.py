# SPDX-License-Identifier: Apache-2.0
"""The real firmware chain on QEMU ``virt`` (docs/firmware.md): the machine
with EL3 and a GIC with two security states (``secure=on``), TF-A's BL1, BL2
and BL31 (with SDEI) from ``scripts/setup.sh tfa``, Debian's U-Boot at EL2
fetching the FIT over TFTP, then Bulkhead. QEMU implements no PSCI with
``secure=on``: the secondary CPUs and the final power-off are TF-A's. Without
the flash image the test fails rather than skips."""

from __future__ import annotations

from pathlib import Path

from bulkhead.generate import qemu
from bulkhead.run.runner import RunResult, run

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTEFACTS = REPO_ROOT / "artefacts" / "linux"
OUT = REPO_ROOT / "build" / "qemu-tests"


def _through_tfa(config: str, timeout: float) -> RunResult:
    assert qemu.TFA_FLASH.is_file(), "run 'bash scripts/setup.sh tfa' first (the TF-A flash image)"
    res = run(REPO_ROOT / "configs" / f"{config}.yaml", timeout=timeout, out=OUT / config, boot="tfa")
    assert not res.timed_out, res.output
    machine = res.argv[res.argv.index("-M") + 1]
    assert "secure=on" in machine.split(",") and "virtualization=on" in machine.split(","), res.argv
    assert res.argv[res.argv.index("-bios") + 1] == str(qemu.TFA_FLASH) and "-kernel" not in res.argv
    out = res.output
    # TF-A ran at EL3 (BL1 -> BL2 -> BL31), then U-Boot (BL33) verified the FIT
    for stage in ("BL1: Booting BL2", "BL1: Booting BL31", "BL31: v2.12"):
        assert stage in out, out
    assert out.index("BL31: v2.12") < out.index("U-Boot 20") < out.index("[bulkhead] Bulkhead"), out
    assert "Verifying Hash Integrity ... crc32+ OK" in out, out
    hyp = [line.removeprefix("[bulkhead] ") for line in res.hyp_lines()]
    assert any(line.startswith("DTB at ") for line in hyp), hyp  # U-Boot's DTB in x0
    assert not [line for line in hyp if "fault" in line or "PANIC" in line], hyp
    # the machine was switched off by TF-A's PSCI SYSTEM_OFF (its platform
    # code drives the secure GPIO poweroff), after every VM was off
    assert out.index("all VMs off") < out.index("QEMU System Power off"), out
    assert res.clean and res.returncode == 0, res.reason
    return res


def test_hello_through_tfa() -> None:
    """A bare-metal VM: the hypervisor initialises the GIC through its
    non-secure view and runs the VM to a clean exit."""
    res = _through_tfa("hello", 60)
    assert res.lines("hello")[-1] == "hello: PASS", res.output
    hyp = [line.removeprefix("[bulkhead] ") for line in res.hyp_lines()]
    assert "all VMs off: clean=1 stopped=0" in hyp, hyp


def test_linux_beside_baremetal_through_tfa() -> None:
    """configs/dual.yaml: Linux on CPUs 0-1 (its second vCPU's pCPU and the
    bare-metal VM's pCPU brought up through TF-A's PSCI CPU_ON), its timer
    and the bare-metal VM's ticks through the two-security-state GIC, to
    userspace and a clean power-off."""
    assert (ARTEFACTS / "Image").is_file(), "run scripts/setup.sh first (Linux artefacts)"
    res = _through_tfa("dual", 240)
    linux = res.lines("linux")
    text = "\n".join(linux)
    assert any("smp: Brought up 1 node, 2 CPUs" in line for line in linux), text
    assert "bulkhead-linux: userspace reached" in linux, text
    assert "bulkhead-linux: cpus online 0-1" in linux, text
    assert "bulkhead-linux: powering off" in linux, text
    rt = res.lines("rt")
    assert rt[-1] == "ticker: PASS (10 ticks)", rt
    hyp = [line.removeprefix("[bulkhead] ") for line in res.hyp_lines()]
    assert "vm linux: off (clean)" in hyp and "vm rt: off (clean)" in hyp, hyp
    assert "all VMs off: clean=2 stopped=0" in hyp, hyp
