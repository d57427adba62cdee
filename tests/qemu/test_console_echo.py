# SPDX-License-Identifier: Apache-2.0
"""Echo as typed (issue #19 item 1): the console shows the input VM's line
as it is produced, before Enter, in a bare-metal guest and in a Linux
shell; another VM's line written meanwhile ends the partial line, which
goes on under a fresh prefix, so every line stays whole and prefixed."""

from __future__ import annotations

import re
import time
from pathlib import Path

from qconsole import Console, build

ARTEFACTS = Path(__file__).resolve().parents[2] / "artefacts" / "linux"


def test_echo_guest_shows_typed_characters_before_enter() -> None:
    con = Console(build("console-echo.yaml"))
    try:
        con.wait_for("[echo] echo: ready")
        con.type("hello")
        con.wait_for_partial("[echo] hello", timeout=30)
        assert "[echo] hello" not in con.lines  # not ended yet
        con.type(" world")
        con.wait_for_partial("[echo] hello world", timeout=30)
        con.type("\r")
        con.wait_for("[echo] echo: got 'hello world'")
        status = con.finish()
    finally:
        con.finish()
    assert status == 0, con.lines
    # the line was shown once, with one prefix, then ended by Enter
    assert con.lines.count("[echo] hello world") == 1, con.lines
    assert not [line for line in con.lines if "hello" in line and line.count("[echo]") != 1]


def test_linux_shell_echo_before_enter() -> None:
    assert (ARTEFACTS / "Image").is_file(), "run scripts/setup.sh first (Linux artefacts)"
    con = Console(build("console-linux.yaml"))
    try:
        con.wait_for("[linux] bulkhead-linux: starting a shell (exit to power off)", timeout=120)
        con.type("echo typed-$((6*7))")
        con.wait_for_partial("echo typed-$((6*7))", timeout=60)
        assert con.partial.startswith("[linux] "), con.partial
        assert "[linux] typed-42" not in con.lines  # the shell has not run it
        con.type("\r")
        con.wait_for("[linux] typed-42", timeout=60)
        con.type("exit\r")
        status = con.finish()
    finally:
        con.finish()
    assert status == 0, con.lines


def test_noisy_neighbour_lines_stay_whole() -> None:
    """Typed one character every 50 ms while the ticker prints every 10 ms:
    the echoed line is cut by tick lines and continued under a fresh
    prefix; nothing is lost, duplicated or interleaved mid-line."""
    text = "the quick brown fox jumps"
    con = Console(build("console-noisy.yaml"))
    try:
        con.wait_for("[echo] echo: ready")
        con.wait_for("[noisy] tick 1/400")
        for c in text:
            con.type(c)
            time.sleep(0.05)
        # no wait for the last piece here: a tick line may end it at once
        con.type("\r")
        con.wait_for(f"[echo] echo: got '{text}'")
        status = con.finish(timeout=120)
    finally:
        con.finish()
    assert status == 0, con.lines
    tick = re.compile(r"tick (\d+)/400|ticker: 400 ticks every 10 ms|ticker: PASS \(400 ticks\)")
    echo_parts: list[str] = []
    ticks: list[int] = []
    got_at = con.lines.index(f"[echo] echo: got '{text}'")
    for n, line in enumerate(con.lines):
        if line.startswith("[noisy] "):
            m = tick.fullmatch(line.removeprefix("[noisy] "))
            assert m, f"malformed neighbour line {line!r}"
            if m.group(1):
                ticks.append(int(m.group(1)))
        elif line.startswith("[echo] "):
            body = line.removeprefix("[echo] ")
            assert "[" not in body, f"two prefixes on one line: {line!r}"
            if n < got_at and not body.startswith("echo: "):
                echo_parts.append(body)
        else:
            assert line.startswith("[bulkhead] "), f"line without a prefix: {line!r}"
    assert ticks == list(range(1, 401)), "tick lines lost, duplicated or reordered"
    assert "".join(echo_parts) == text, echo_parts
    # the neighbour did write while the line was half typed (else this test
    # would not test the cut): the echo came out in more than one piece
    assert len(echo_parts) > 1, con.lines
