# SPDX-License-Identifier: Apache-2.0
"""The README's promise, end to end: `bulkhead run configs/hello.yaml` builds,
boots, streams the console and exits 0; an unclean run exits non-zero."""

from __future__ import annotations

import subprocess
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
BULKHEAD = REPO_ROOT / ".venv" / "bin" / "bulkhead"


def test_bulkhead_run_hello() -> None:
    out = REPO_ROOT / "build" / "qemu-tests" / "cli-hello"
    proc = subprocess.run([str(BULKHEAD), "run", str(REPO_ROOT / "configs" / "hello.yaml"),
                           "--out", str(out), "--timeout", "60"],
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert "[hello] hello: PASS" in lines, proc.stdout
    assert lines[-1] == "[bulkhead] all VMs off: clean=1 stopped=0", proc.stdout


def test_bulkhead_run_unclean_exits_1() -> None:
    out = REPO_ROOT / "build" / "qemu-tests" / "cli-stop"
    proc = subprocess.run([str(BULKHEAD), "run",
                           str(REPO_ROOT / "tests" / "configs" / "isolation-stop.yaml"),
                           "--out", str(out), "--timeout", "60"],
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "stopped" in proc.stderr, proc.stderr
