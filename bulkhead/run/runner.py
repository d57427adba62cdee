# SPDX-License-Identifier: Apache-2.0
"""``bulkhead run``: build, boot under QEMU, judge the outcome.

A run is *clean* when QEMU exited 0 and the hypervisor printed
``[bulkhead] all VMs off: clean=<n> stopped=0`` with n = the number of VMs
and no VM reported a non-zero exit status (``BH_HC_EXIT``).
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from bulkhead.base import procs
from bulkhead.base.errors import RunError
from bulkhead.config import bandwidth as bw_mod
from bulkhead.config import pci, shared_io
from bulkhead.generate import build as build_mod
from bulkhead.generate import fit, qemu
from bulkhead.layout.load import PLATFORMS_DIR, load_spec
from bulkhead.run import cachemodel, hostpeer

HYP_PREFIX = "[bulkhead] "
ALL_OFF_RE = re.compile(r"\[bulkhead\] all VMs off: clean=(\d+) stopped=(\d+)\s*$")
PANIC_RE = re.compile(r"\[bulkhead\] PANIC: (.*)$")
STOPPED_RE = re.compile(r"\[bulkhead\] vm (\S+): stopped \((.*)\)\s*$")
EXIT_RE = re.compile(r"\[bulkhead\] vm (\S+): off \(exit status (\d+)\)\s*$")
KILL_GRACE = 3.0


@dataclass
class RunResult:
    returncode: int  # QEMU's exit status (negative: killed by that signal)
    timed_out: bool
    output: str  # all console text, line ends normalised to "\n"
    clean: bool
    nvms: int = 0
    reason: str = ""  # why the run is not clean ("" when clean)
    argv: tuple[str, ...] = field(default=())
    model_report: Path | None = None  # --model: the cache model's JSON report (bulkhead.cachemodel)

    def all_lines(self) -> list[str]:
        return self.output.splitlines()

    def lines(self, vm: str) -> list[str]:
        """Text of the lines VM ``vm`` printed (its ``[vm] `` prefix removed)."""
        prefix = f"[{vm}] "
        result = []
        for line in self.all_lines():
            if line.startswith(prefix):
                result.append(line[len(prefix):])
            elif line == prefix.rstrip():
                result.append("")
        return result

    def hyp_lines(self) -> list[str]:
        """Lines the hypervisor itself printed, ``[bulkhead] `` prefix kept."""
        return [line for line in self.all_lines() if line.startswith(HYP_PREFIX)]

    def dma_faults(self) -> dict[str, dict[str, Any]]:
        """Per VM that owns DMA streams: its DMA fault counts, from the line
        the hypervisor prints when the VM powers off or stops
        (``vm X: N DMA fault(s) from M device(s)`` and a line per device;
        docs/dma.md)."""
        return dma_faults(self.hyp_lines())


    def sgi_dropped(self) -> dict[str, int]:
        """Per VM with ``interrupts: direct``: its vCPUs' SGI writes the
        hypervisor dropped or filtered (docs/interrupts.md), from the line it
        prints when the VM powers off or stops."""
        return sgi_dropped(self.hyp_lines())


_DMA_LINE = re.compile(r"\[bulkhead\] vm (\S+): (\d+) DMA fault\(s\) from (\d+) device\(s\)")
_DMA_DEVICE_LINE = re.compile(r"\[bulkhead\] vm (\S+): DMA fault\(s\) of (\S+): (\d+)")
_DMA_LOST_LINE = re.compile(r"\[bulkhead\] vm (\S+): DMA fault records lost (\d+) time\(s\).*")


def dma_faults(hyp_lines: list[str]) -> dict[str, dict[str, Any]]:
    """``{vm: {"total": n, "devices": {device: n}, "lost": k}}`` from the
    hypervisor's DMA fault lines: ``vm X: N DMA fault(s) from M device(s)``,
    then one ``vm X: DMA fault(s) of D: n`` per device (a VM's summary line
    starts its report anew: a reset VM reports again); ``lost``: how many
    times an SMMU of the VM's streams lost fault records (event queue
    overflow), so ``total`` is a lower bound."""
    out: dict[str, dict[str, Any]] = {}
    for line in hyp_lines:
        lost = _DMA_LOST_LINE.fullmatch(line)
        if lost and lost.group(1) in out:
            out[lost.group(1)]["lost"] = int(lost.group(2))
        dev = _DMA_DEVICE_LINE.fullmatch(line)
        if dev and dev.group(1) in out:
            out[dev.group(1)]["devices"][dev.group(2)] = int(dev.group(3))
        m = _DMA_LINE.fullmatch(line)
        if m:
            out[m.group(1)] = {"total": int(m.group(2)), "devices": {}, "lost": 0}
    return out


_SGI_LINE = re.compile(r"\[bulkhead\] vm (\S+): (\d+) SGI write\(s\) dropped or filtered \(interrupts: direct\)")


def sgi_dropped(hyp_lines: list[str]) -> dict[str, int]:
    """``{vm: n}`` from the hypervisor's dropped-SGI lines of direct VMs (a
    count since boot: the last line of a VM wins)."""
    return {m.group(1): int(m.group(2)) for m in map(_SGI_LINE.fullmatch, hyp_lines) if m}


def judge(returncode: int, timed_out: bool, output: str, nvms: int,
          timeout: float | None = None, until: re.Pattern[str] | None = None) -> tuple[bool, str]:
    """(clean, reason) for a finished QEMU run. A run ended by ``until``
    matching is clean unless the hypervisor panicked, a VM was stopped or
    reported failure before."""
    lines = output.splitlines()
    all_off = None
    for line in lines:
        m = ALL_OFF_RE.match(line)
        if m:
            all_off = (int(m.group(1)), int(m.group(2)))
    if timed_out:
        after = f" after {timeout:g} s" if timeout is not None else ""
        return False, f"timed out{after} (QEMU killed)"
    for line in lines:
        m = PANIC_RE.match(line)
        if m:
            return False, f"hypervisor panic: {m.group(1).strip()}"
    for line in lines:
        m = STOPPED_RE.match(line)
        if m:
            return False, f"VM '{m.group(1)}' was stopped ({m.group(2)})"
    for line in lines:
        m = EXIT_RE.match(line)
        if m:
            return False, f"VM '{m.group(1)}' reported failure (exit status {m.group(2)})"
    if until is not None and until.search(output):
        return True, ""
    if all_off is None:
        return False, f"QEMU exited with status {returncode} without the hypervisor's 'all VMs off' line"
    if all_off != (nvms, 0):
        return False, (f"all VMs off: clean={all_off[0]} stopped={all_off[1]} "
                       f"(expected clean={nvms} stopped=0)")
    if returncode != 0:
        return False, f"QEMU exited with status {returncode}"
    return True, ""


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


def prepare(
    config_path: Path | str,
    *,
    icount: int | None = None,
    out: Path | None = None,
    extra_qemu_args: Sequence[str] = (),
    gdb: bool = False,
    gdb_port: int = qemu.GDB_PORT,
    interactive: bool = False,
    build_log: TextIO | None = None,
    boot: str = "image",
    until: re.Pattern[str] | str | None = None,
    netdev: str | None = None,
    model: bool = False,
    platforms_dir: Path = PLATFORMS_DIR,
    fit_in_ram: bool = False,
    timing: int | None = None,
) -> Prepared:
    """Build ``config_path`` (incrementally) and compose its QEMU command
    line; the arguments are :func:`run`'s."""
    platform = load_spec(config_path, platforms_dir=platforms_dir).platform
    machine = qemu.model(platform).machine  # refuses a board without a QEMU model before building it
    if boot in ("uboot", "tfa"):
        if not machine.startswith("virt"):
            raise RunError(f"--boot {boot} runs Debian's U-Boot for QEMU virt; this platform's machine is "
                           f"'{machine}' (on a board, U-Boot comes with the vendor's boot chain: "
                           "docs/boards/zynqmp.md)")
        if boot == "tfa" and not qemu.TFA_FLASH.is_file():
            raise RunError(f"--boot tfa needs the TF-A flash image {qemu.TFA_FLASH}: build it with "
                           "'bash scripts/setup.sh tfa' (docs/firmware.md)")
    elif boot != "image":
        raise RunError(f"unknown boot mode '{boot}' (image, uboot, tfa)")
    if timing is not None and icount is not None:
        raise RunError("timing mode runs the vCPUs side by side without -icount (the model owns time): "
                       "drop --icount or --timing (docs/model.md \"Timing mode\")")
    if timing is not None and timing <= 0:
        raise RunError(f"the timing mode's quantum must be > 0 ns, not {timing}")
    result = build_mod.build(config_path, out, log=build_log, platforms_dir=platforms_dir)
    model_report = None
    if timing is not None:
        plugin_args, model_report = cachemodel.qemu_args(result.system, result.out, result.elf, timing)
        extra_qemu_args = [*plugin_args, *extra_qemu_args]
    elif model:
        plugin_args, model_report = cachemodel.qemu_args(result.system, result.out, result.elf)
        extra_qemu_args = [*plugin_args, *extra_qemu_args]
        icount = 0 if icount is None else icount
    starved = bw_mod.starved_under_icount(result.system, icount or 0)
    if starved:
        raise RunError("; ".join(starved))
    argv = qemu.command(
        result.system.platform, result.placed_elf, (), icount=icount, gdb=gdb, gdb_port=gdb_port,
        interactive=interactive, extra=(*shared_io.qemu_args(result.system, netdev),
                                        *pci.qemu_args(result.system, str(result.out.absolute())), *extra_qemu_args),
    )
    fit_at = None
    if fit_in_ram:
        image_size = result.elf.with_suffix(".bin").stat().st_size
        fit_at = (result.itb, fit.scratch_address(result.system.platform, image_size))
    if boot == "uboot":
        argv = qemu.uboot_command(argv, build_mod.uboot_tftp(result, build_log or sys.stderr), fit_at)
    elif boot == "tfa":
        argv = qemu.tfa_command(argv, build_mod.uboot_tftp(result, build_log or sys.stderr), fit_at=fit_at)
    pattern = re.compile(until) if isinstance(until, str) else until
    return Prepared(result, argv, len(result.system.vms), pattern, model_report)


def run(
    config_path: Path | str,
    *,
    timeout: float | None,
    icount: int | None = None,
    out: Path | None = None,
    extra_qemu_args: Sequence[str] = (),
    gdb: bool = False,
    gdb_port: int = qemu.GDB_PORT,
    interactive: bool = False,
    stream: TextIO | None = None,
    build_log: TextIO | None = None,
    poke: tuple[bytes, float] | None = None,
    boot: str = "image",
    until: re.Pattern[str] | str | None = None,
    netdev: str | None = None,
    model: bool = False,
    platforms_dir: Path = PLATFORMS_DIR,
    fit_in_ram: bool = False,
    timing: int | None = None,
) -> RunResult:
    """Build ``config_path`` (incrementally) and boot it under QEMU.

    ``timeout`` bounds the QEMU run (not the build); ``stream`` receives the
    console output live (None: captured only); ``build_log`` receives make's
    and dtc's output (default: stderr). Raises ConfigError / BuildError when
    the system cannot be built. ``netdev``: the -netdev backend of a config's
    shared I/O device (default user-mode; docs/io.md). Safe to call concurrently for different
    configs or out dirs; builds of one out dir are serialised by a lock.
    ``until``: end the run (QEMU killed) as soon as the console output
    matches this regular expression; such a run is clean unless something
    went wrong before (see judge).
    ``model``: load the cache model plugin (docs/model.md; -icount 0 unless
    ``icount`` says otherwise); its report is ``RunResult.model_report``.
    ``platforms_dir``: where the config's platform file is looked up (a
    benchmark's variant of a platform, e.g. more CPUs).
    ``fit_in_ram`` (``boot`` uboot or tfa): QEMU loads the FIT into RAM and
    U-Boot boots it from there, not over TFTP, whose user-mode network
    answers in host time: an ``icount`` run then repeats exactly (docs/firmware.md).
    ``timing``: timing mode with this quantum in ns (docs/model.md "Timing
    mode"): the cache model with its timing model, the vCPUs side by side
    (MTTCG, no -icount) in lock-step on their modelled clocks; implies
    ``model`` and refuses ``icount``.
    """
    p = prepare(config_path, icount=icount, out=out, extra_qemu_args=extra_qemu_args, gdb=gdb,
                gdb_port=gdb_port, interactive=interactive, build_log=build_log, boot=boot, until=until,
                netdev=netdev, model=model, platforms_dir=platforms_dir, fit_in_ram=fit_in_ram,
                timing=timing)
    # the host side of the Linux VMs' workloads (an iperf3 server for iperf3 -c 10.0.2.2)
    with hostpeer.for_bootargs(vm.bootargs for vm in p.build.system.spec.vms if vm.type == "linux"):
        returncode, timed_out, output = supervise(p.argv, timeout=timeout, stream=stream,
                                                  interactive=interactive, poke=poke, until=p.until)
    clean, reason = judge(returncode, timed_out, output, p.nvms, timeout, p.until)
    return RunResult(returncode, timed_out, output, clean, p.nvms, reason, tuple(p.argv), p.model_report)
