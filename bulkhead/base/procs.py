# SPDX-License-Identifier: Apache-2.0
"""Child processes that end with the toolchain (issue #32 item 8).

Every process a run starts (QEMU, the build's make and dtc) is started with
:func:`popen`, which

- ties the child to the life of the process that starts it: the child gets
  ``PR_SET_PDEATHSIG`` = SIGKILL (Linux ``prctl(2)``), so a runner killed
  outright (SIGKILL, the OOM killer) takes its QEMU with it. The child is
  started through util-linux's ``setpriv --pdeathsig KILL`` (Essential on
  Debian), which sets it and execs the command in the same process: no
  ``preexec_fn``, whose fork in a threaded process (labgrid's gRPC client
  registers fork handlers) crashed the children with SIGSEGV;
- registers it while it lives, so that :func:`stop_all` can end them all.

:func:`handle_signals` (the CLI's, main thread only) turns SIGTERM, SIGINT
and SIGHUP into :class:`Stopped`: the handler first sends SIGTERM to every
live child (to its process group when it has its own), refuses to start new
ones, then raises in the main thread; whoever started a child waits for it
on the way out (the runner: KILL_GRACE seconds, then SIGKILL), and the CLI
exits with 128 + the signal number (143 for SIGTERM, 130 for SIGINT, 129
for SIGHUP).

The parent-death signal is sent when the *thread* that forked the child
ends: children must be started from threads that outlive them (the main
thread, or the worker threads of ``bulkhead experiment --jobs``, which live
until the whole matrix is done).
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import threading
from collections.abc import Sequence
from types import FrameType
from typing import Any

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class Stopped(BaseException):
    """The toolchain was asked to stop by ``signum`` (not an error of the run:
    a BaseException, like KeyboardInterrupt, so that no ``except Exception``
    swallows it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum

    @property
    def exit_status(self) -> int:
        return 128 + self.signum


_lock = threading.RLock()  # reentrant: the signal handler runs in the main thread, maybe inside popen
_live: dict[int, tuple[subprocess.Popen[Any], bool]] = {}  # pid -> (process, own process group)
_stopping: int | None = None  # the signal that stops everything, once one came


_SETPRIV = shutil.which("setpriv")


def tied(argv: Sequence[str]) -> list[str]:
    """``argv`` run so that it gets SIGKILL when its parent ends (as is, where
    setpriv is missing: not Linux)."""
    if not _SETPRIV:
        return list(argv)
    if shutil.which(argv[0]) is None:  # as Popen would, not setpriv's own exec error
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), argv[0])
    return [_SETPRIV, "--pdeathsig", "KILL", "--", *argv]


def stopping() -> int | None:
    """The signal that stopped the toolchain, or None."""
    return _stopping


def popen(argv: Sequence[str], *, own_group: bool = False, **kwargs: Any) -> subprocess.Popen[Any]:
    """subprocess.Popen(argv, **kwargs), tied to this process's life and
    registered (``own_group``: in a new session, so that its own children
    are signalled with it). Raises Stopped once a stop signal came.
    Call :func:`release` when it has ended."""
    with _lock:
        if _stopping is not None:
            raise Stopped(_stopping)
        proc: subprocess.Popen[Any] = subprocess.Popen(tied(argv), start_new_session=own_group, **kwargs)
        _live[proc.pid] = (proc, own_group)
    return proc


def release(proc: subprocess.Popen[Any]) -> None:
    """Forget ``proc`` (it has ended, or is being waited for by its owner)."""
    with _lock:
        _live.pop(proc.pid, None)


def signal_child(proc: subprocess.Popen[Any], sig: int, own_group: bool = True) -> None:
    """Send ``sig`` to ``proc`` (to its process group when it has its own)."""
    try:
        if own_group:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
    except (ProcessLookupError, PermissionError):
        pass


def stop_all(signum: int) -> None:
    """Refuse new children from now on and send SIGTERM to every live one."""
    global _stopping
    with _lock:
        if _stopping is None:
            _stopping = signum
        live = list(_live.values())
    for proc, own_group in live:
        if proc.poll() is None:
            signal_child(proc, signal.SIGTERM, own_group)


def _handler(signum: int, frame: FrameType | None) -> None:
    stop_all(signum)
    raise Stopped(signum)


Handlers = dict[int, Any]


def handle_signals() -> Handlers:
    """Install the stop handlers (SIGTERM, SIGINT, SIGHUP) and return the
    previous ones (for :func:`restore`); nothing outside the main thread."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {sig: signal.signal(sig, _handler) for sig in STOP_SIGNALS}


def restore(handlers: Handlers) -> None:
    """Put back the handlers :func:`handle_signals` replaced."""
    for sig, old in handlers.items():
        signal.signal(sig, old)


def reset() -> None:
    """Back to the start state (a test's, or a library user's after a stop)."""
    global _stopping
    with _lock:
        _stopping = None
