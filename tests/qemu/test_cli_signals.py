# SPDX-License-Identifier: Apache-2.0
"""Issue #32 item 8: no QEMU outlives the command that started it.

`bulkhead run` and `bulkhead experiment` are stopped while their QEMU runs a
guest that would tick for minutes: by SIGTERM (the CLI stops QEMU, waits
for it and exits 128 + 15) and, separately, by SIGKILL (QEMU is tied to the
runner's life by PR_SET_PDEATHSIG). Afterwards none of the QEMUs the
command had started, nor anything in their sessions, is left (a /proc scan
of the PIDs seen while it ran)."""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
BULKHEAD = REPO_ROOT / ".venv" / "bin" / "bulkhead"

TICKER = """\
platform: qemu-virt
vms:
  - name: tick
    cpus: [0]
    memory:
      - {ipa: 0x40000000, size: 16M}
    guest: ticker
    params: {ticks: 100000, period_ms: 10}
"""

SPEC = """\
name: sig
system:
  platform: qemu-virt
  vms:
    - {name: bench, cpus: [0], memory: [{ipa: 0x40000000, size: 16M}], guest: hello}
critical: bench
benchmarks:
  - {name: tick, guest: ticker, params: {ticks: 100000, period_ms: 10}, metric: mean_ns}
scenarios: [{name: a}, {name: b}, {name: c}]
repetitions: 1
timeout: 600
"""


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, session) of a live process, None if it is gone (or a zombie)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    if fields[0] in ("Z", "X"):
        return None
    return fields[0], int(fields[1]), int(fields[3])


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _all_pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def _children(pid: int) -> list[int]:
    return [p for p in _all_pids() if (st := _stat(p)) is not None and st[1] == pid]


def _in_sessions(sessions: set[int]) -> list[int]:
    return [p for p in _all_pids() if (st := _stat(p)) is not None and st[2] in sessions]


def _wait_for_qemus(runner: subprocess.Popen[bytes], count: int, timeout: float = 400.0) -> set[int]:
    """The PIDs of the first ``count`` QEMUs the runner starts, once each has
    run for a second (the build comes first)."""
    deadline = time.monotonic() + timeout
    seen: dict[int, float] = {}
    while time.monotonic() < deadline:
        assert runner.poll() is None, f"the runner ended early ({runner.returncode})"
        for p in _children(runner.pid):
            if _comm(p).startswith("qemu-system"):
                seen.setdefault(p, time.monotonic())
        ready = {p for p, t in seen.items() if time.monotonic() - t > 1.0 and _stat(p) is not None}
        if len(ready) >= count:
            return ready
        time.sleep(0.2)
    pytest.fail(f"the runner started {len(seen)} QEMU(s) in {timeout:g} s, expected {count}")


def _drain(proc: subprocess.Popen[bytes], until: bytes, timeout: float) -> bytes:
    assert proc.stdout is not None
    out = b""
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        while until not in out and time.monotonic() < deadline:
            if sel.select(0.5):
                data = os.read(proc.stdout.fileno(), 65536)
                if not data:
                    break
                out += data
    return out


def _stop_and_check(runner: subprocess.Popen[bytes], qemus: set[int], sig: int) -> None:
    sessions = set(qemus)  # QEMU leads its own session: its helpers would be in it
    try:
        runner.send_signal(sig)
        status = runner.wait(timeout=60)
        if sig == signal.SIGKILL:
            assert status == -signal.SIGKILL
        else:
            assert status == 128 + sig, f"exit status {status}"
        deadline = time.monotonic() + 15  # SIGKILL: the parent-death signal, then init reaps
        left = _in_sessions(sessions)
        while left and time.monotonic() < deadline:
            time.sleep(0.2)
            left = _in_sessions(sessions)
        assert not left, f"left running after {signal.Signals(sig).name}: " + ", ".join(
            f"{p} ({_comm(p)})" for p in left)
    finally:
        for p in _in_sessions(sessions):  # only what this test's runner started
            os.kill(p, signal.SIGKILL)
        if runner.poll() is None:
            runner.kill()
            runner.wait()


def _close(runner: subprocess.Popen[bytes]) -> None:
    if runner.poll() is None:
        runner.kill()
        runner.wait()
    if runner.stdout is not None:
        runner.stdout.close()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_run_stopped_leaves_no_qemu(tmp_path: Path, sig: int) -> None:
    config = tmp_path / "ticker.yaml"
    config.write_text(TICKER)
    out = REPO_ROOT / "build" / "qemu-tests" / "cli-signals"
    runner = subprocess.Popen([str(BULKHEAD), "run", str(config), "--out", str(out), "--timeout", "600"],
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        text = _drain(runner, b"[tick] tick 3/", 400)
        assert b"[tick] tick 3/" in text, text.decode(errors="replace")[-2000:]
        qemus = _wait_for_qemus(runner, 1)
        _stop_and_check(runner, qemus, sig)
        if sig == signal.SIGTERM:
            assert runner.stdout is not None
            assert b"bulkhead: stopped by SIGTERM" in runner.stdout.read()
    finally:
        _close(runner)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_experiment_stopped_leaves_no_qemu(tmp_path: Path, sig: int) -> None:
    """Two runs in parallel (--jobs 2: QEMUs started by worker threads), a
    third waiting; after the stop no QEMU is left and none is started."""
    spec = tmp_path / "sig.yaml"
    spec.write_text(SPEC)
    runner = subprocess.Popen([str(BULKHEAD), "experiment", str(spec), "--out", str(tmp_path / "out"),
                               "--jobs", "2"],
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        qemus = _wait_for_qemus(runner, 2)
        _stop_and_check(runner, qemus, sig)
    finally:
        _close(runner)
