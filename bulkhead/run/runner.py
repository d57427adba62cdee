# SPDX-License-Identifier: Apache-2.0
"""``bulkhead run``: build, boot under QEMU, judge the outcome (the
local QEMU backend; :mod:`bulkhead.run.backend`).

QEMU runs in its own process group, which is killed on timeout, on any
error and when the runner is stopped (SIGTERM, SIGINT, SIGHUP: forwarded,
waited for; bulkhead.base.procs), and it is tied to the runner's life
(PR_SET_PDEATHSIG): no QEMU is ever left behind, even by a runner killed
outright.
"""

from __future__ import annotations

import codecs
import os
import re
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from bulkhead.base import procs
from bulkhead.base.errors import RunError
from bulkhead.config import bandwidth as bw_mod
from bulkhead.config import pci, shared_disk, shared_io
from bulkhead.generate import build as build_mod
from bulkhead.generate import fit, qemu
from bulkhead.layout.load import load_spec
from bulkhead.run import cachemodel, hostpeer
from bulkhead.run.backend import RunOptions
from bulkhead.run.result import HYP_PREFIX as HYP_PREFIX
from bulkhead.run.result import RunResult as RunResult
from bulkhead.run.result import dma_faults as dma_faults
from bulkhead.run.result import judge as judge
from bulkhead.run.result import sgi_dropped as sgi_dropped

KILL_GRACE = 3.0


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    for sig, grace in ((signal.SIGTERM, KILL_GRACE), (signal.SIGKILL, None)):
        procs.signal_child(proc, sig)
        try:
            proc.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


def supervise(
    argv: Sequence[str],
    *,
    timeout: float | None,
    stream: TextIO | None = None,
    interactive: bool = False,
    poke: tuple[bytes, float] | None = None,
    until: re.Pattern[str] | None = None,
) -> tuple[int, bool, str]:
    """Run ``argv`` in its own process group; returns (status, timed_out, output).

    Output is copied to ``stream`` as it arrives. ``interactive``: stdin is
    passed through (and a terminal's settings are restored afterwards);
    ``poke = (data, interval)``: stdin is a pipe that receives ``data`` at
    once and then every ``interval`` seconds (e.g. console commands), and
    with ``interactive`` what is typed too (the terminal in raw mode, as
    QEMU would set it); otherwise stdin is /dev/null. ``until``: the process is killed as soon
    as the output matches (searched over the last 8 KiB as text arrives).
    """
    termios_state = _save_tty() if interactive else None
    stdin: int | None = None if interactive else subprocess.DEVNULL
    forward = -1  # the terminal whose keys go into the poke pipe
    if poke is not None:
        stdin = subprocess.PIPE
        if interactive and termios_state is not None:
            forward = sys.stdin.fileno()
            _raw_tty(forward)
    try:
        proc = procs.popen(argv, own_group=True, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    except OSError as exc:
        raise RunError(f"cannot start {argv[0]}: {exc.strerror or exc}") from None
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    chunks: list[str] = []
    timed_out = matched = False
    deadline = None if timeout is None else time.monotonic() + timeout
    next_poke = time.monotonic() if poke is not None else None  # first at once: the UART holds it
    try:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            if forward >= 0:
                sel.register(forward, selectors.EVENT_READ)
            while True:
                wait = None if deadline is None else deadline - time.monotonic()
                if wait is not None and wait <= 0:
                    timed_out = True
                    break
                if poke is not None and next_poke is not None:
                    if time.monotonic() >= next_poke:
                        next_poke = _poke(proc, poke)
                    if next_poke is not None:
                        to_poke = max(next_poke - time.monotonic(), 0.0)
                        wait = to_poke if wait is None else min(wait, to_poke)
                ready = {key.fd for key, _ in sel.select(wait)}
                if forward in ready and not _forward_keys(proc, forward):
                    sel.unregister(forward)
                    forward = -1
                if fd not in ready:
                    continue
                data = os.read(fd, 65536)
                if not data:
                    break
                text = decoder.decode(data)
                chunks.append(text)
                if stream is not None:
                    stream.write(text)
                    stream.flush()
                if until is not None and until_matched(until, "".join(chunks[-64:])):
                    matched = True
                    break
        if not timed_out and not matched:
            wait = None if deadline is None else max(deadline - time.monotonic(), 0.0)
            try:
                proc.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                timed_out = True
    finally:
        if proc.poll() is None:
            _kill_group(proc)
        procs.release(proc)
        if proc.stdout is not None:
            proc.stdout.close()
        if proc.stdin is not None:
            try:
                proc.stdin.close()
            except OSError:
                pass
        _restore_tty(termios_state)
    tail = decoder.decode(b"", final=True)
    chunks.append(tail)
    if stream is not None and tail:
        stream.write(tail)
        stream.flush()
    output = "".join(chunks).replace("\r", "")
    return proc.returncode, timed_out, output


def until_matched(until: re.Pattern[str], output: str) -> bool:
    """Whether ``output`` (normalised or not) matches ``until`` in its last 8 KiB."""
    return until.search(output[-8192:].replace("\r", "")) is not None


def _poke(proc: subprocess.Popen[bytes], poke: tuple[bytes, float]) -> float | None:
    """Writes the poke data to QEMU's stdin; the next time to do so (None:
    the pipe is gone)."""
    assert proc.stdin is not None
    try:
        proc.stdin.write(poke[0])
        proc.stdin.flush()
    except (BrokenPipeError, OSError):
        return None
    return time.monotonic() + poke[1]


def _forward_keys(proc: subprocess.Popen[bytes], tty: int) -> bool:
    """Copies what was typed into QEMU's stdin pipe; False when either end is gone."""
    assert proc.stdin is not None
    data = os.read(tty, 4096)
    if not data:
        return False
    try:
        proc.stdin.write(data)
        proc.stdin.flush()
    except (BrokenPipeError, OSError):
        return False
    return True


def _raw_tty(tty: int) -> None:
    try:
        import tty as tty_mod

        tty_mod.setraw(tty)
    except (ImportError, OSError):
        pass


def _save_tty() -> list[Any] | None:
    try:
        import termios

        if sys.stdin.isatty():
            return list(termios.tcgetattr(sys.stdin.fileno()))
    except (ImportError, OSError, ValueError):
        pass
    return None


def _restore_tty(state: list[Any] | None) -> None:
    if state is None:
        return
    try:
        import termios

        termios.tcsetattr(sys.stdin.fileno(), termios.TCSADRAIN, state)
    except (ImportError, OSError, ValueError):
        pass


@dataclass
class Prepared:
    """A built config and the QEMU command line that boots it (what
    :func:`run` supervises locally and :mod:`bulkhead.run.farm` hands to a
    labgrid target)."""

    build: build_mod.BuildResult
    argv: list[str]
    nvms: int
    until: re.Pattern[str] | None
    model_report: Path | None


def prepare(config_path: Path | str, options: RunOptions) -> Prepared:
    """Build ``config_path`` (incrementally) and compose its QEMU command
    line for ``options``."""
    o = options
    platform = load_spec(config_path, platforms_dir=o.platforms_dir).platform
    machine = qemu.model(platform).machine  # refuses a board without a QEMU model before building it
    if o.boot in ("uboot", "tfa"):
        if not machine.startswith("virt"):
            raise RunError(f"--boot {o.boot} runs Debian's U-Boot for QEMU virt; this platform's machine is "
                           f"'{machine}' (on a board, U-Boot comes with the vendor's boot chain: "
                           "docs/boards/zynqmp.md)")
        if o.boot == "tfa" and not qemu.TFA_FLASH.is_file():
            raise RunError(f"--boot tfa needs the TF-A flash image {qemu.TFA_FLASH}: build it with "
                           "'bash scripts/setup.sh tfa' (docs/firmware.md)")
    dtb = qemu.dtb_path(platform)
    if dtb is not None and not dtb.is_file():
        raise RunError(f"{dtb} not found (qemu.dtb of platform '{platform.name}'): unpack the board DTBs "
                       "with 'bash scripts/setup.sh dtbs'")
    result = build_mod.build(config_path, o.out, log=o.build_log, platforms_dir=o.platforms_dir)
    model_report = None
    extra_qemu_args: Sequence[str] = o.extra_qemu_args
    icount = o.icount
    if o.timing is not None:
        plugin_args, model_report = cachemodel.qemu_args(result.system, result.out, result.elf, o.timing)
        extra_qemu_args = [*plugin_args, *extra_qemu_args]
    elif o.model:
        plugin_args, model_report = cachemodel.qemu_args(result.system, result.out, result.elf)
        extra_qemu_args = [*plugin_args, *extra_qemu_args]
        icount = 0 if icount is None else icount
    starved = bw_mod.starved_under_icount(result.system, icount or 0)
    if starved:
        raise RunError("; ".join(starved))
    argv = qemu.command(
        result.system.platform, result.placed_elf, (), icount=icount, gdb=o.gdb_port is not None,
        gdb_port=qemu.GDB_PORT if o.gdb_port is None else o.gdb_port, gdb_halt=o.gdb_halt,
        interactive=o.interactive,
        extra=(*shared_io.qemu_args(result.system, o.netdev),
               *shared_disk.qemu_args(result.system, str(result.out.absolute())),
               *pci.qemu_args(result.system, str(result.out.absolute())), *extra_qemu_args),
    )
    fit_at = None
    if o.fit_in_ram:
        image_size = result.elf.with_suffix(".bin").stat().st_size
        fit_at = (result.itb, fit.scratch_address(result.system.platform, image_size))
    if o.boot == "uboot":
        argv = qemu.uboot_command(argv, build_mod.uboot_tftp(result, o.build_log or sys.stderr), fit_at)
    elif o.boot == "tfa":
        argv = qemu.tfa_command(argv, build_mod.uboot_tftp(result, o.build_log or sys.stderr), fit_at=fit_at)
    if o.timing is not None:
        argv = [cachemodel.timing_qemu(argv[0]), *argv[1:]]
    return Prepared(result, argv, len(result.system.vms), o.until, model_report)


def run(config_path: Path | str, options: RunOptions) -> RunResult:
    """The local QEMU backend (:class:`bulkhead.run.backend.Backend`): build
    ``config_path`` (incrementally) and boot it under QEMU as ``options``
    say. Raises ConfigError / BuildError when the system cannot be built.
    Safe to call concurrently for different configs or out dirs; builds of
    one out dir are serialised by a lock. Under ``options.model`` or
    ``options.timing`` the cache model's report is
    ``RunResult.model_report``."""
    p = prepare(config_path, options)
    # the host side of the Linux VMs' workloads (an iperf3 server for iperf3 -c 10.0.2.2)
    with hostpeer.for_bootargs(vm.bootargs for vm in p.build.system.spec.vms if vm.type == "linux"):
        returncode, timed_out, output = supervise(p.argv, timeout=options.timeout, stream=options.stream,
                                                  interactive=options.interactive, poke=options.poke,
                                                  until=p.until)
    clean, reason = judge(returncode, timed_out, output, p.nvms, options.timeout, p.until)
    return RunResult(returncode, timed_out, output, clean, p.nvms, reason, tuple(p.argv), p.model_report)
