# SPDX-License-Identifier: Apache-2.0
"""The real firmware chain on QEMU ``virt`` (docs/firmware.md): the machine
with EL3 and a GIC with two security states (``secure=on``), TF-A's BL1, BL2
and BL31 (with SDEI) from ``scripts/setup.sh tfa``, Debian's U-Boot at EL2
fetching the FIT over TFTP, then Bulkhead. QEMU implements no PSCI with
``secure=on``: the secondary CPUs and the final power-off are TF-A's. Without
the flash image the tests fail rather than skip.

``test_sdei_through_tfa`` checks the firmware's SDEI service itself with a
bare-metal EL2 probe (tools/fwprobe/) in place of the hypervisor."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from bulkhead.generate import qemu
from bulkhead.layout.load import load_platform
from bulkhead.run.backend import RunOptions
from bulkhead.run.runner import RunResult, run, supervise

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTEFACTS = REPO_ROOT / "artefacts" / "linux"
OUT = REPO_ROOT / "build" / "qemu-tests"
FWPROBE = REPO_ROOT / "tools" / "fwprobe"
FWPROBE_BASE = 0x48000000  # in QEMU virt's RAM, clear of U-Boot and where it loads scripts


def _through_tfa(config: str, timeout: float) -> RunResult:
    assert qemu.TFA_FLASH.is_file(), "run 'bash scripts/setup.sh tfa' first (the TF-A flash image)"
    res = run(REPO_ROOT / "configs" / f"{config}.yaml", RunOptions(timeout=timeout, out=OUT / config, boot="tfa"))
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


def test_fit_in_ram_boot_repeats_exactly() -> None:
    """`bulkhead run --boot tfa --fit-in-ram --icount 0`, twice: U-Boot boots
    the FIT QEMU put in RAM (no DHCP, no TFTP, whose answers come in host
    time), so the two runs print the same virtual-time boot lines (the boot
    phases, the first guest instruction) and the same hypervisor log."""
    assert qemu.TFA_FLASH.is_file(), "run 'bash scripts/setup.sh tfa' first (the TF-A flash image)"
    timed = re.compile(r"\[bulkhead\] (boot phases \(us since reset\)|vm hello: first guest instruction at)")
    runs = []
    for _ in range(2):
        proc = subprocess.run([str(REPO_ROOT / ".venv" / "bin" / "bulkhead"), "run", "configs/hello.yaml",
                               "--boot", "tfa", "--fit-in-ram", "--icount", "0", "--timeout", "60",
                               "--out", str(OUT / "hello-fit-in-ram")],
                              cwd=REPO_ROOT, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        out = proc.stdout
        assert "BL31: v2.12" in out and "## Loading kernel from FIT Image at " in out, out
        assert "DHCP" not in out and "TFTP from server" not in out, out
        assert "[hello] hello: PASS" in out, out
        runs.append([line for line in out.splitlines() if line.startswith("[bulkhead] ")])
    boot_lines = [[line for line in hyp if timed.match(line)] for hyp in runs]
    assert len(boot_lines[0]) == 2, runs[0]
    assert boot_lines[0] == boot_lines[1], boot_lines
    assert runs[0] == runs[1], runs


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


SEG_RE = re.compile(r"bwprobe: vcpu 0 seg \d+ run_ns=(\d+) stall_ns=(\d+) work=\d+")
LAST_RE = re.compile(r"bwprobe: stats vcpu0 last=(\d+) max=\d+ mean=\d+ throttles=(\d+) stalled_ns=\d+")


def test_regulation_through_tfa(tmp_path: Path) -> None:
    """Memory-bandwidth regulation under TF-A (``-icount shift=0``: 1
    instruction = 1 ns): the PMU overflow and the EL2 timer, non-secure
    interrupts through the two-security-state GIC, hold a 100 us period's
    30,000-event budget as on QEMU -kernel (tests/qemu/test_bandwidth.py's
    bounds: a run within [budget - 3 us, budget + 1 us], the stall the
    rest of the period within 3 us, the counted events within budget +
    100)."""
    assert qemu.TFA_FLASH.is_file(), "run 'bash scripts/setup.sh tfa' first (the TF-A flash image)"
    text = (REPO_ROOT / "tests" / "configs" / "bw-basic.yaml").read_text()
    config = tmp_path / "bw-basic.yaml"
    config.write_text(text.replace("period_us: 1000", "period_us: 100")
                      .replace("budget_events: 300000", "budget_events: 30000")
                      .replace("segs: 16", "segs: 16, gap_ns: 1500"))
    res = run(config, RunOptions(timeout=240, icount=0, out=OUT / "bw-basic-tfa", boot="tfa"))
    assert not res.timed_out and res.clean, res.output
    assert "BL31: v2.12" in res.output and "secure=on" in res.argv[res.argv.index("-M") + 1]
    segs = [(int(m[1]), int(m[2])) for m in map(SEG_RE.fullmatch, res.lines("bw")) if m]
    assert len(segs) >= 10, res.output
    for run_ns, stall_ns in segs:
        assert 30_000 - 3000 <= run_ns <= 30_000 + 1000, (run_ns, res.output)
        assert abs(stall_ns - (100_000 - run_ns)) <= 3000, (stall_ns, res.output)
    last = [m for m in map(LAST_RE.fullmatch, res.lines("bw")) if m]
    assert last and 30_000 <= int(last[-1][1]) <= 30_100 and int(last[-1][2]) >= 16, res.output


def _fwprobe_tftp(tmp: Path) -> Path:
    """The probe as a legacy U-Boot kernel image (``bootm`` enters it at EL2
    like the FIT's hypervisor; U-Boot 2023.01's ``go`` hangs in its PL011
    flush) and a boot script that boots it, in ``tmp``."""
    subprocess.run(["make", "-s", "-C", str(FWPROBE), f"BASE=0x{FWPROBE_BASE:x}", f"OUT={tmp}"], check=True)
    flat = tmp / "fwprobe.bin"
    tftp = tmp / "tftp"
    tftp.mkdir()
    subprocess.run(["mkimage", "-A", "arm64", "-O", "linux", "-T", "kernel", "-C", "none",
                    "-a", f"0x{FWPROBE_BASE:x}", "-e", f"0x{FWPROBE_BASE:x}", "-d", str(flat),
                    str(tftp / "fwprobe.uimg")], check=True, capture_output=True)
    (tmp / "boot.cmd").write_text("tftpboot 0x50000000 fwprobe.uimg\n"
                                  "bootm 0x50000000 - ${fdtcontroladdr}\necho fwprobe: not started\npoweroff\n")
    subprocess.run(["mkimage", "-A", "arm64", "-T", "script", "-C", "none", "-d", str(tmp / "boot.cmd"),
                    str(tftp / "boot.scr.uimg")], check=True, capture_output=True)
    return tftp


def test_sdei_through_tfa(tmp_path: Path) -> None:
    """TF-A's SDEI at EL2, as the hypervisor would use it: version 1.0,
    event 0 signalled to this PE and dispatched to the handler with its
    argument, then the EL2 physical timer's PPI 26 bound to a dynamic event
    (the slots ``scripts/setup.sh tfa`` adds to PLAT=qemu's event map; without
    them SDEI_INTERRUPT_BIND fails with SDEI_ENOMEM) and dispatched when the
    timer fires; the interrupted code resumes each time, and PSCI SYSTEM_OFF
    ends the run."""
    assert qemu.TFA_FLASH.is_file(), "run 'bash scripts/setup.sh tfa' first (the TF-A flash image)"
    base = qemu.command(load_platform("qemu-virt"), tmp_path / "unused.elf", (), extra=("-no-reboot",))
    argv = qemu.tfa_command(base, _fwprobe_tftp(tmp_path))
    status, timed_out, output = supervise(argv, timeout=60)
    assert not timed_out, output
    steps = [(m.group(1), int(m.group(2), 16))
             for m in re.finditer(r"^fwprobe: (.+?) 0x([0-9a-f]{16})\r?$", output, re.MULTILINE)]
    got = dict(steps)
    assert got.get("entry counter", 0) > 0 and got.get("CurrentEL") == 2, output
    assert got.get("SDEI_VERSION") == 1 << 48, output  # major 1, minor 0
    for step in ("register event 0", "enable event 0", "PE unmask", "signal event 0"):
        assert got.get(step) == 0, (step, output)
    assert got.get("signalled event dispatched") == 0, output
    # each handler got its registration's argument
    assert [v for k, v in steps if k == "handler argument"] == [0xB0, 0xB1], output
    assert got.get("bind PPI 26") == 1000, output  # the first dynamic private event
    assert got.get("register bound event") == 0 and got.get("enable bound event") == 0, output
    assert got.get("timer event dispatched") == 1000, output
    assert got.get("counter frequency") == 62_500_000, output
    assert "fwprobe: done" in output and "timed out" not in output, output
    assert output.index("fwprobe: done") < output.index("QEMU System Power off"), output
    assert status == 0, output
