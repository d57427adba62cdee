# SPDX-License-Identifier: Apache-2.0
"""Echo as typed (issue #19 item 1): the console shows the input VM's line
as it is produced, before Enter, in a bare-metal guest and in a Linux
shell; another VM's line written meanwhile ends the partial line, which
goes on under a fresh prefix, so every line stays whole and prefixed."""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import time
from pathlib import Path

from qconsole import CONFIGS, Console, build

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTEFACTS = REPO_ROOT / "artefacts" / "linux"
BULKHEAD = REPO_ROOT / ".venv" / "bin" / "bulkhead"


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
        # the next prompt shows before anything is typed: the pl011 driver
        # masked its TX interrupt with nothing more to send
        con.wait_for_partial(" # ", timeout=30)  # busybox's "/ # "
        assert con.partial.startswith("[linux] "), con.partial
        # busybox then asks the terminal for the cursor position (ESC [ 6 n):
        # the control sequence is dropped, not printed as "?[6n"
        time.sleep(1)
        assert "?[" not in con.partial, con.partial
        con.type("exit\r")
        status = con.finish()
    finally:
        con.finish()
    assert status == 0, con.lines
    assert not [line for line in con.lines if "?[" in line], con.lines


def test_line_longer_than_the_assembly_buffer_stays_one_line() -> None:
    """A guest line longer than the console's assembly buffer (160 bytes)
    comes out as one prefixed line, not cut in two with nothing to say the
    second part continues the first."""
    text = "".join(chr(ord("a") + i % 26) for i in range(220))
    con = Console(build("console-echo.yaml"))
    try:
        con.wait_for("[echo] echo: ready")
        for at in range(0, len(text), 20):
            con.type(text[at : at + 20])
            con.wait_for_partial(text[max(0, at - 100) : at + 20], timeout=30)
        con.type("\r")
        con.wait_for(f"[echo] echo: got '{text}'")
        status = con.finish()
    finally:
        con.finish()
    assert status == 0, con.lines
    assert con.lines.count(f"[echo] {text}") == 1, con.lines


def test_noisy_neighbour_lines_stay_whole() -> None:
    """Typed one character every 50 ms while the ticker prints every 10 ms:
    the echoed line is cut by tick lines and continued under a fresh
    prefix that marks it a continuation ("[echo]+ "); nothing is lost,
    duplicated or interleaved mid-line."""
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
    marks: list[str] = []
    ticks: list[int] = []
    got_at = con.lines.index(f"[echo] echo: got '{text}'")
    for n, line in enumerate(con.lines):
        if line.startswith("[noisy] "):
            m = tick.fullmatch(line.removeprefix("[noisy] "))
            assert m, f"malformed neighbour line {line!r}"
            if m.group(1):
                ticks.append(int(m.group(1)))
        elif line.startswith(("[echo] ", "[echo]+ ")):
            mark, body = line.split(" ", 1)
            assert "[" not in body, f"two prefixes on one line: {line!r}"
            if n < got_at and not body.startswith("echo: "):
                echo_parts.append(body)
                marks.append(mark)
        else:
            assert line.startswith("[bulkhead] "), f"line without a prefix: {line!r}"
    assert ticks == list(range(1, 401)), "tick lines lost, duplicated or reordered"
    assert "".join(echo_parts) == text, echo_parts
    # the neighbour did write while the line was half typed (else this test
    # would not test the cut): the echo came out in more than one piece
    assert len(echo_parts) > 1, con.lines
    assert marks == ["[echo]"] + ["[echo]+"] * (len(marks) - 1), con.lines


def test_bulkhead_run_on_a_terminal_shows_echo_as_typed() -> None:
    """The user's path: `bulkhead run` on a terminal (QEMU's -serial
    mon:stdio, stdin passed through) streams the echo before Enter."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: bulkhead run on the pseudo-terminal
        os.chdir(REPO_ROOT)
        os.execv(str(BULKHEAD), [str(BULKHEAD), "run", str(CONFIGS / "console-echo.yaml"),
                                 "--out", str(REPO_ROOT / "build" / "qemu-tests" / "console-echo-tty"),
                                 "--timeout", "120"])
    seen = bytearray()

    def read_until(needle: bytes, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while needle not in seen:
            left = deadline - time.monotonic()
            assert left > 0, f"timed out waiting for {needle!r}:\n{seen.decode(errors='replace')}"
            if select.select([fd], [], [], min(left, 1.0))[0]:
                try:
                    seen.extend(os.read(fd, 4096))
                except OSError:  # the child closed the terminal
                    break

    status: int | None = None
    try:
        read_until(b"[echo] echo: ready", 300)  # includes the build
        os.write(fd, b"typed")
        read_until(b"[echo] typed", 30)
        assert b"echo: got" not in seen
        os.write(fd, b"\r")
        read_until(b"[bulkhead] all VMs off: clean=1 stopped=0", 60)
        status = os.waitpid(pid, 0)[1]
    finally:
        if status is None:  # Ctrl-C: bulkhead run kills QEMU's process group
            os.kill(pid, signal.SIGINT)
            for _ in range(100):
                if os.waitpid(pid, os.WNOHANG)[0]:
                    break
                time.sleep(0.1)
            else:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0, seen.decode(errors="replace")
    assert b"[echo] echo: got 'typed'" in seen
