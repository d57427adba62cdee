# SPDX-License-Identifier: Apache-2.0
"""Lossless console input: 4 KiB pasted in one burst (lines of up to 200
characters) arrives whole in a bare-metal guest and in a Linux shell
(the hypervisor's input buffer behind the virtual PL011's FIFO, and the
physical UART held while that buffer is full)."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

from qconsole import Console
from qconsole import build as build  # re-exported: test_zynqmp.py swaps it

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTEFACTS = REPO_ROOT / "artefacts" / "linux"


def _paste_lines() -> list[str]:
    """41 lines, 4,200 bytes with their newlines, 1 to 200 printable
    characters each; the last one short enough to come back as one console
    line."""
    rng = random.Random(19)
    lengths = [200] + [(i * 37) % 200 + 1 for i in range(1, 40)] + [60]
    printable = [chr(c) for c in range(0x21, 0x7F)]
    return ["".join(rng.choice(printable) for _ in range(n)) for n in lengths]


def _fnv1a(text: str) -> int:
    h = 0x811C9DC5
    for b in text.encode():
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def test_paste_into_baremetal_guest() -> None:
    """The echo guest is busy 2 ms after each line (console-paste.yaml), so
    the paste outruns it: what it has not read yet must wait."""
    lines = _paste_lines()
    assert sum(len(line) + 1 for line in lines) >= 4096 and max(map(len, lines)) == 200
    con = Console(build("console-paste.yaml"))
    try:
        con.wait_for("[echo] echo: ready")
        con.type("".join(line + "\r" for line in lines))  # one burst
        con.wait_for("[echo] echo: PASS", timeout=120)
        status = con.finish()
    finally:
        con.finish()
    assert status == 0, con.lines
    got = [line.removeprefix("[echo] ") for line in con.lines if line.startswith("[echo] echo: line ")]
    want = [f"echo: line {i} len {len(line)} fnv 0x{_fnv1a(line):08x}" for i, line in enumerate(lines)]
    assert got == want
    total = sum(len(line) + 1 for line in lines)
    assert f"[echo] echo: {len(lines)} lines {total} bytes" in con.lines


def test_paste_into_linux_shell() -> None:
    assert (ARTEFACTS / "Image").is_file(), "run scripts/setup.sh first (Linux artefacts)"
    lines = _paste_lines()
    text = "".join(line + "\n" for line in lines)
    con = Console(build("console-linux.yaml"))
    try:
        con.wait_for("[linux] bulkhead-linux: starting a shell (exit to power off)", timeout=120)
        con.type("echo cat-starts; cat > /tmp/x\r")
        con.wait_for("[linux] cat-starts")
        # the shell echoed the marker and forked cat; the tty queues input meanwhile
        con.type(text.replace("\n", "\r"))  # a terminal sends CR for Enter
        con.wait_for("[linux] " + lines[-1], timeout=120)  # echoed as typed
        con.type("\x04")  # Ctrl-D: end of cat's input
        con.type("wc -c < /tmp/x; busybox md5sum /tmp/x; exit\r")
        md5 = hashlib.md5(text.encode()).hexdigest()
        con.wait_for(f"[linux] {md5}  /tmp/x", timeout=60)
        status = con.finish()
    finally:
        con.finish()
    assert status == 0, con.lines
    assert f"[linux] {len(text)}" in con.lines, con.lines[-20:]
    # every line came back through the tty echo, nothing lost on the way out
    # either
    echoed = "".join(line.removeprefix("[linux] ") for line in con.lines if line.startswith("[linux] "))
    assert "".join(lines) in echoed


def test_pl011_fifo_flags_and_levels() -> None:
    """RXFF, RXFE, RX at the IFLS level and RT below it, with the FIFO on and
    off, as Linux's amba-pl011 driver reads them."""
    con = Console(build("uartfifo.yaml"))
    try:
        con.wait_for("[fifo] uartfifo: ready 1")
        con.type("0123456789" * 4)  # no Enter: raw characters
        con.wait_for("[fifo] uartfifo: ready 2")
        con.type("01")
        con.wait_for("[fifo] uartfifo: ready 3")
        con.type("012")
        con.wait_for("[fifo] uartfifo: ready 4")
        con.type("3")
        status = con.finish()
    finally:
        con.finish()
    assert status == 0, con.lines
    assert "[fifo] uartfifo: PASS" in con.lines, con.lines
