# SPDX-License-Identifier: Apache-2.0
"""QEMU with its serial console on pipes, for tests that type into a guest
(sys.path holds tests/qemu/ under pytest's default import mode)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
CONFIGS = REPO_ROOT / "tests" / "configs"


def build(config: str) -> list[str]:
    out = REPO_ROOT / "build" / "qemu-tests" / Path(config).stem
    subprocess.run([str(REPO_ROOT / ".venv" / "bin" / "bulkhead"), "build", str(CONFIGS / config),
                    "--out", str(out)], check=True, capture_output=True, text=True)
    manifest = json.loads((out / "manifest.json").read_text())
    return list(manifest["qemu"])


class Console:
    """QEMU with its serial console on pipes: read lines (and the line not
    ended yet, ``partial``), type characters."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        self.lines: list[str] = []
        self.partial = ""  # what came after the last newline
        self.cond = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout
        fd = self.proc.stdout.fileno()
        pending = b""
        while data := os.read(fd, 65536):
            *done, pending = (pending + data).split(b"\n")
            with self.cond:
                self.lines.extend(raw.decode(errors="replace").rstrip("\r") for raw in done)
                self.partial = pending.decode(errors="replace").replace("\r", "")
                self.cond.notify_all()
        with self.cond:
            if pending:
                self.lines.append(pending.decode(errors="replace").rstrip("\r"))
            self.partial = ""
            self.cond.notify_all()

    def wait_for(self, line: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        with self.cond:
            while line not in self.lines:
                left = deadline - time.monotonic()
                assert left > 0, f"timed out waiting for {line!r}:\n" + "\n".join(self.lines)
                self.cond.wait(left)

    def wait_for_match(self, pattern: str, timeout: float = 60) -> str:
        """The first line matching regular expression ``pattern`` (waits for it)."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for line in self.lines:
                    if rx.search(line):
                        return line
                left = deadline - time.monotonic()
                assert left > 0, f"timed out waiting for /{pattern}/:\n" + "\n".join(self.lines)
                self.cond.wait(left)

    def wait_for_partial(self, text: str, timeout: float = 60) -> None:
        """Waits until the line not ended yet contains ``text``."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while text not in self.partial:
                left = deadline - time.monotonic()
                assert left > 0, (f"timed out waiting for {text!r} before the end of a line "
                                  f"(partial {self.partial!r}):\n" + "\n".join(self.lines))
                self.cond.wait(left)

    def type(self, text: str) -> None:
        assert self.proc.stdin
        self.proc.stdin.write(text.encode())
        self.proc.stdin.flush()

    def finish(self, timeout: float = 60) -> int:
        try:
            return self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
            self.reader.join(5)
            for pipe in (self.proc.stdin, self.proc.stdout):
                if pipe and not pipe.closed:
                    pipe.close()
