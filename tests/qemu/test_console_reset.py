# SPDX-License-Identifier: Apache-2.0
"""Console input routing (with the Ctrl-T switch) and per-VM SYSTEM_RESET."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any


REPO_ROOT = Path(__file__).resolve().parents[2]
CONFIGS = REPO_ROOT / "tests" / "configs"


def _build(config: str) -> list[str]:
    out = REPO_ROOT / "build" / "qemu-tests" / Path(config).stem
    subprocess.run([str(REPO_ROOT / ".venv" / "bin" / "bulkhead"), "build", str(CONFIGS / config),
                    "--out", str(out)], check=True, capture_output=True, text=True)
    manifest = json.loads((out / "manifest.json").read_text())
    return list(manifest["qemu"])


class Console:
    """QEMU with its serial console on pipes: read lines, type characters."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        self.lines: list[str] = []
        self.cond = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout
        for raw in self.proc.stdout:
            with self.cond:
                self.lines.append(raw.decode(errors="replace").rstrip("\r\n"))
                self.cond.notify_all()

    def wait_for(self, line: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        with self.cond:
            while line not in self.lines:
                left = deadline - time.monotonic()
                assert left > 0, f"timed out waiting for {line!r}:\n" + "\n".join(self.lines)
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


def test_console_input_and_switch() -> None:
    con = Console(_build("console-input.yaml"))
    try:
        con.wait_for("[first] echo: ready")
        con.wait_for("[second] echo: ready")
        con.type("alpha\r")
        con.wait_for("[first] echo: got 'alpha'")
        con.type("\x14" "1")  # Ctrl-T 1: input to VM 1
        con.wait_for("[bulkhead] console input -> vm second")
        con.type("beta\r")
        con.wait_for("[second] echo: got 'beta'")
        status = con.finish()
    finally:
        con.finish()
    assert status == 0, con.lines
    assert "[bulkhead] all VMs off: clean=2 stopped=0" in con.lines, con.lines
    # input never leaked to the other VM
    assert not [line for line in con.lines if line.startswith("[second]") and "alpha" in line]


def test_system_reset_reloads_only_that_vm(boot: Any) -> None:
    res = boot("reset.yaml")
    assert res.clean, res.output
    assert res.lines("reset") == [
        "reset: boot 1", "reset: resetting", "reset: boot 2", "reset: PASS (image reloaded)",
    ], res.output
    hyp = [line.removeprefix("[bulkhead] ") for line in res.hyp_lines()]
    assert "vm reset: reset" in hyp, hyp
    assert res.lines("ticker")[-1] == "ticker: PASS (5 ticks)", res.output
