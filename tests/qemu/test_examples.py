# SPDX-License-Identifier: Apache-2.0
"""Every example in configs/ (issue #26 item 6) is checked and booted: the
config validates (`bulkhead check`), the system builds, boots under QEMU and
ends cleanly by itself (every VM powers off, none failed or was stopped);
a config for a board QEMU does not model is checked and built only. Linux examples report and power off
(the initrd's /init, or a script in the bootargs); bare-metal guests finish; some must also print what
shows their mechanism at work (EXPECT)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from bulkhead import cli
from bulkhead.generate.build import build
from bulkhead.layout.load import load_system
from bulkhead.run.backend import RunOptions
from bulkhead.run.runner import run

ROOT = Path(__file__).resolve().parents[2]
# configs/console.yaml stays up until Ctrl-A x (the tutorial's console steps): its own test
INTERACTIVE = ROOT / "configs" / "console.yaml"
EXAMPLES = sorted(p for p in (ROOT / "configs").glob("*.yaml") if p != INTERACTIVE)
LINUX = ROOT / "artefacts" / "linux" / "Image"
# what an example must print besides ending cleanly: (regex, minimum of its group 1 if any)
EXPECT: dict[str, tuple[tuple[str, int], ...]] = {
    # the stock Linux client's virtio-net (no Bulkhead module) moved data through the I/O VM
    "io-virtio": (
        (r"^\[linux\] bulkhead-linux: userspace reached$", 0),
        (r"^\[linux\] 10 packets transmitted, (10) packets received, 0% packet loss$", 10),
        (r"^\[bulkhead\] vm linux: virtio-net notifies=\d+ tx=(\d+) ", 10),
        (r"^\[iovm\] iovm: client linux tx=\d+ tx_bytes=(\d+) ", 10 * 1028),
        (r"^\[iovm\] iovm: PASS$", 0),
    ),
    # Raspberry Pi 4 on raspi4b: Linux SMP to userspace (CPUs 1-2 released from the spin table),
    # console input through the PL011 to the echo VM, L2 colors placed (Ctrl-T c), the hog
    # regulated on the fallback event and throttled, and the PM watchdog's power-off (clean end)
    "rpi4b": (
        (r"^\[linux\] \[ *[\d.]+\] smp: Brought up 1 node, (\d+) CPUs$", 2),
        (r"^\[linux\] bulkhead-linux: userspace reached$", 0),
        # "hi" typed whole at least once (FNV-1a 0x683af69a): what is typed before the guest
        # enables its receive interrupt may be cut, so the line is typed every few seconds
        (r"^\[echo\] echo: line \d len 2 fnv 0x683af69a$", 0),
        (r"^\[echo\] echo: PASS$", 0),
        (r"^\[bulkhead\] coloring: CPU L2 1024 KiB 16-way 64 B lines: LLC color bits 12-15, as in the platform", 0),
        (r"^\[bulkhead\] colors: vm bomb: colored, LLC 12-15, bank 0$", 0),
        (r"^\[bulkhead\] colors: {3}40000000>[0-9a-f]+ L0/B0 40001000>[0-9a-f]+ L1/B0 ", 0),
        (r"^\[bulkhead\] bw: vm bomb: this CPU does not count event 0x19 \(PMCEID\); counting the platform's "
         r"fallback event 0x11 instead", 0),
        (r"^\[bomb\] result bench=regulator vcpus=1 throttles=(\d+) ", 10),
    ),
    # the KV260's console is UART1 (QEMU's second serial port): the hypervisor's lines and the
    # keys poked (POKE) travel through it; Linux SMP to userspace, each VM's pages in its own
    # LLC colors (Ctrl-T c, colorwalk), the interferer throttled
    "kv260": (
        (r"^\[bulkhead\] Bulkhead \S+ on kv260 \(board zynqmp\)", 0),
        (r"^\[linux\] \[ *[\d.]+\] smp: Brought up 1 node, (\d+) CPUs$", 2),
        (r"^\[linux\] bulkhead-linux: userspace reached$", 0),
        (r"^\[bulkhead\] colors: vm linux: colored, LLC 0-11,", 0),
        (r"^\[bulkhead\] colors: vm interferer: colored, LLC 12-13,", 0),
        (r"^\[colorwalk\] colorwalk: PASS \((\d+) pages\)$", 1024),
        (r"^\[interferer\] result bench=regulator vcpus=1 throttles=(\d+) ", 1),
    ),
    # i.MX 8M Plus EVK on imx8mp-evk, whose GIC's virtual IRQ line QEMU leaves unconnected: every
    # interrupt of these VMs reaches them through the quirk gic.virq: software (Linux's timer and
    # IPIs, the ticker's timer); console input through UART2 (POKE), the interferer throttled
    "imx8mp-evk-qemu": (
        (r"^\[bulkhead\] Bulkhead \S+ on imx8mp-evk-qemu \(board imx8mp\)", 0),
        (r"^\[linux\] \[ *[\d.]+\] smp: Brought up 1 node, (\d+) CPUs$", 2),
        (r"^\[linux\] bulkhead-linux: userspace reached$", 0),
        (r"^\[rt\] ticker: PASS \((\d+) ticks\)$", 10),
        (r"^\[bulkhead\] colors: vm linux: colored, LLC 0-3,", 0),
        (r"^\[bulkhead\] colors: vm rt: colored, LLC 4-5,", 0),
        (r"^\[bulkhead\] colors: vm interferer: colored, LLC 6-7,", 0),
        (r"^\[interferer\] result bench=regulator vcpus=1 throttles=(\d+) ", 1),
    ),
    # Versal: QEMU boots the flat image as a Linux Image (EL2, its DTB in x0: the RAM it declares);
    # the second A72 started through PSCI; console input through the PL011 (POKE)
    "versal": (
        (r"^\[bulkhead\] Bulkhead \S+ on versal \(board versal\)", 0),
        (r"^\[bulkhead\] DTB at [0-9a-f]+: RAM 800000000-87fffffff$", 0),
        (r"^\[linux\] bulkhead-linux: userspace reached$", 0),
        (r"^\[bulkhead\] colors: vm linux: colored, LLC 0-11,", 0),
        (r"^\[bulkhead\] colors: vm interferer: colored, LLC 12-15,", 0),
        (r"^\[interferer\] result bench=regulator vcpus=1 throttles=(\d+) ", 1),
    ),
}
# what an example gets on its console (QEMU's stdin), at once and then every so many seconds:
# console input at work
POKE: dict[str, tuple[bytes, float]] = {
    "rpi4b": (b"hi\r\x14c", 2.0),  # a line for the echo VM, Ctrl-T c: the VMs' colors
    "kv260": (b"\x14c", 1.0),  # Ctrl-T c: the hypervisor prints every VM's colors
    "versal": (b"\x14c", 1.0),
    "imx8mp-evk-qemu": (b"\x14c", 1.0),
}


def test_there_are_examples_for_each_platform() -> None:
    text = {p.stem: p.read_text() for p in EXAMPLES}
    platforms = {line.split(":", 1)[1].strip() for t in text.values() for line in t.splitlines()
                 if line.startswith("platform:")}
    assert {"qemu-virt", "zcu102", "zcu104", "rpi4b", "kv260", "versal", "imx8mp-evk-qemu"} <= platforms


@pytest.mark.parametrize("config", EXAMPLES, ids=lambda p: p.stem)
def test_example_checks_and_boots(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if "type: linux" in config.read_text() and not LINUX.exists():
        pytest.skip("needs the Linux artefacts (scripts/setup.sh linux)")
    assert cli.main(["check", str(config)]) == 0
    capsys.readouterr()
    out = ROOT / "build" / "qemu-tests" / f"example-{config.stem}"
    if load_system(config).platform.qemu is None:
        # a board QEMU does not model (e.g. rk3588-opi5p): built for the board, not booted
        assert build(config, out, log=io.StringIO()).elf.is_file()
        pytest.skip(f"{config.name}: platform without a QEMU model: checked and built, not booted")
    res = run(config, RunOptions(timeout=240, icount=None, out=out, poke=POKE.get(config.stem)))
    assert res.clean, f"{config.name}: {res.reason}\n{res.output[-3000:]}"
    assert "PANIC" not in res.output
    for pattern, least in EXPECT.get(config.stem, ()):
        m = re.search(pattern, res.output, re.MULTILINE)
        assert m, f"{config.name}: no line /{pattern}/ in\n{res.output[-3000:]}"
        assert not least or int(m.group(1)) >= least, (pattern, m.group(0))


def test_console_example_stays_up_and_answers_the_tutorials_keys() -> None:
    """docs/tutorial.md §5-§6 on configs/console.yaml: typed text is echoed,
    Ctrl-T c shows both VMs' colors, Ctrl-T b the ticker's regulation,
    Ctrl-T 1 switches input, and the system runs until Ctrl-A x."""
    import json
    import subprocess

    from qconsole import Console

    out = ROOT / "build" / "qemu-tests" / "example-console"
    subprocess.run([str(ROOT / ".venv" / "bin" / "bulkhead"), "build", str(INTERACTIVE), "--out", str(out)],
                   check=True, capture_output=True, text=True)
    argv = list(json.loads((out / "manifest.json").read_text())["qemu"])
    # as `bulkhead run` on a terminal: the monitor multiplexed on stdio, so Ctrl-A x quits
    argv[argv.index("-serial") + 1] = "mon:stdio"
    con = Console(argv)
    try:
        con.wait_for("[echo] echo: ready")
        con.wait_for("[ticker] tick 1/3600", timeout=120)
        con.type("hi")
        con.wait_for_partial("hi")
        con.type("\x14c")  # Ctrl-T c
        con.wait_for_match(r"^\[bulkhead\] colors: vm ticker ")
        con.type("\x14b")  # Ctrl-T b
        con.wait_for_match(r"^\[bulkhead\] bw vm=ticker vcpu=0 ")
        con.type("\x141")  # Ctrl-T 1
        con.wait_for("[bulkhead] console input -> vm ticker")
        con.wait_for("[ticker] tick 2/3600", timeout=120)  # still up
        assert not any("all VMs off" in line or "PASS" in line for line in con.lines), con.lines
        con.type("\x01x")  # Ctrl-A x: QEMU quits
        assert con.finish(60) == 0
    finally:
        con.finish(5)
