# SPDX-License-Identifier: Apache-2.0
"""The README's promise, end to end: `bulkhead run configs/hello.yaml` builds,
boots, streams the console and exits 0; an unclean run exits non-zero."""

from __future__ import annotations

import subprocess
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
BULKHEAD = REPO_ROOT / ".venv" / "bin" / "bulkhead"


def _run(config: Path, out_name: str) -> subprocess.CompletedProcess[str]:
    out = REPO_ROOT / "build" / "qemu-tests" / out_name
    return subprocess.run([str(BULKHEAD), "run", str(config), "--out", str(out), "--timeout", "60"],
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)


def test_bulkhead_run_hello() -> None:
    proc = _run(REPO_ROOT / "configs" / "hello.yaml", "cli-hello")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert "[hello] hello: PASS" in lines, proc.stdout
    assert lines[-1] == "[bulkhead] all VMs off: clean=1 stopped=0", proc.stdout


def test_bulkhead_run_unclean_exits_1() -> None:
    proc = _run(REPO_ROOT / "tests" / "configs" / "isolation-stop.yaml", "cli-stop")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "stopped" in proc.stderr, proc.stderr


def test_bulkhead_run_guest_failure_exits_1() -> None:
    """A guest whose main returns non-zero (BH_HC_EXIT) fails the run; the
    error names the VM and its status, the other VM still powers off clean."""
    proc = _run(REPO_ROOT / "tests" / "configs" / "exit-status.yaml", "cli-exit-status")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert "[bad] exitstatus: returning 3" in lines, proc.stdout
    assert "[bulkhead] vm bad: off (exit status 3)" in lines, proc.stdout
    assert "[bulkhead] vm ok: off (clean)" in lines, proc.stdout
    assert "VM 'bad' reported failure (exit status 3)" in proc.stderr, proc.stderr


def test_guest_owns_both_el1_timers() -> None:
    """Issue #17 item 2: each VM arms its EL1 virtual and physical timers
    (CNTP_* untrapped) and receives PPI 27 and PPI 30 once per arming, at or
    after the compare value (the guest checks), on its own CPU."""
    proc = _run(REPO_ROOT / "tests" / "configs" / "timers.yaml", "cli-timers")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert "[t0] timers: PASS (3 rounds)" in lines, proc.stdout
    assert "[t1] timers: PASS (4 rounds)" in lines, proc.stdout
    assert sum(1 for line in lines if line.startswith("[t1] timers: round ")) == 4, proc.stdout
    assert not [line for line in lines if "FAIL" in line or "guest: " in line], proc.stdout
    assert "[bulkhead] all VMs off: clean=2 stopped=0" in lines, proc.stdout


def test_image_vm_gets_dtb_in_x0() -> None:
    """Issue #17 item 3: a `type: image` VM boots a raw image (guests/dtbcheck,
    no parameter block) at its entry with x0 = the IPA of a generated DTB;
    the guest checks the FDT magic and finds /memory@ (with reg) and /chosen."""
    proc = _run(REPO_ROOT / "tests" / "configs" / "image-vm.yaml", "cli-image-vm")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert "[img] dtbcheck: x0 = 0x40ff0000" in lines, proc.stdout  # last 64 KiB of memory[0]
    assert "[img] dtbcheck: /memory@40000000" in lines, proc.stdout
    assert "[img] dtbcheck: /chosen" in lines, proc.stdout
    assert "[img] dtbcheck: PASS" in lines, proc.stdout
    assert "[bulkhead] vm img: off (clean)" in lines, proc.stdout


def test_image_vm_boots_elf(tmp_path: Path) -> None:
    """The same guest given as its ELF file (segments flattened by the
    toolchain, entry = e_entry) also gets its DTB in x0."""
    proc = subprocess.run(["make", "-C", str(REPO_ROOT / "guests"), f"O={tmp_path}", "dtbcheck"],
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    config = tmp_path / "elf.yaml"
    config.write_text("platform: qemu-virt\nvms:\n  - name: elfvm\n    type: image\n    cpus: [0]\n"
                      "    memory: [{ipa: 0x40000000, size: 16M}]\n    image: dtbcheck.elf\n")
    proc = _run(config, "cli-image-elf")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert "[elfvm] dtbcheck: x0 = 0x40ff0000" in lines, proc.stdout
    assert "[elfvm] dtbcheck: PASS" in lines, proc.stdout


def test_level_interrupts_follow_their_line() -> None:
    """Issue #17 item 1: the EL1 virtual and physical timers and the
    passthrough PL031 read pending in the virtual GIC exactly while their
    line is high; dropped at the source before the guest took them (IRQs
    masked), they are neither pending nor delivered; asserted with IRQs
    unmasked they are delivered once; asserted while disabled in the virtual
    GIC, not before they are enabled, then once (the interrupt hot path
    declines a disabled virtual interrupt, issue #12)."""
    proc = _run(REPO_ROOT / "tests" / "configs" / "level.yaml", "cli-level")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = [x.removeprefix("[level] ") for x in proc.stdout.splitlines() if x.startswith("[level] ")]
    assert lines == [f"level: {src} {step} ok" for src, steps in
                     (("vtimer", ("disabled", "masked", "delivered once", "enabled once")),
                      ("ptimer", ("disabled", "masked", "delivered once", "enabled once")),
                      ("rtc", ("disabled", "delivered once", "enabled once"))) for step in steps] + \
        ["level: PASS (3 sources)"], proc.stdout
