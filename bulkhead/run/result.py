# SPDX-License-Identifier: Apache-2.0
"""What a run came to: :class:`RunResult` (the console, how QEMU ended) and
:func:`judge`, which decides whether a finished run is clean, for every
backend alike; the hypervisor's DMA-fault and dropped-SGI lines read from
the console.

A run is *clean* when QEMU exited 0 and the hypervisor printed
``[bulkhead] all VMs off: clean=<n> stopped=0`` with n = the number of VMs
and no VM reported a non-zero exit status (``BH_HC_EXIT``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HYP_PREFIX = "[bulkhead] "
ALL_OFF_RE = re.compile(r"\[bulkhead\] all VMs off: clean=(\d+) stopped=(\d+)\s*$")
PANIC_RE = re.compile(r"\[bulkhead\] PANIC: (.*)$")
STOPPED_RE = re.compile(r"\[bulkhead\] vm (\S+): stopped \((.*)\)\s*$")
EXIT_RE = re.compile(r"\[bulkhead\] vm (\S+): off \(exit status (\d+)\)\s*$")
# a VM's first instruction and its end (off or stopped), in the order they came
_VM_STATE_RE = re.compile(r"\[bulkhead\] vm (\S+): (first guest instruction|off \(|stopped \()")
_LAST_LINE_MAX = 100


def vm_lines(lines: list[str], vm: str) -> list[str]:
    """Text of the console ``lines`` VM ``vm`` printed (its ``[vm] `` prefix
    removed), a line another's cut joined again: the console writes its
    rest under ``[vm]+ `` (hypervisor/core/console/console.h)."""
    prefix, cont = f"[{vm}] ", f"[{vm}]+ "
    result: list[str] = []
    for line in lines:
        if line.startswith(prefix):
            result.append(line[len(prefix):])
        elif line == prefix.rstrip():
            result.append("")
        elif line.startswith(cont) and result:
            result[-1] += line[len(cont):]
        elif line.startswith(cont):  # its start is not in this output
            result.append(line[len(cont):])
    return result


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
        """Text of the lines VM ``vm`` printed (:func:`vm_lines`)."""
        return vm_lines(self.all_lines(), vm)

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

    def direct_exits(self) -> dict[str, dict[str, int]]:
        """Per VM with ``interrupts: direct``: ``{exits, irq_exits}``, the
        exits on its CPUs since boot and those an interrupt caused (its
        guest takes its own with none: these are the hypervisor's events;
        docs/interrupts.md), from the line it prints when the VM powers off
        or stops."""
        return {m[1]: {"exits": int(m[2]), "irq_exits": int(m[3])}
                for m in map(_EXITS_LINE.fullmatch, self.hyp_lines()) if m}


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


_EXITS_LINE = re.compile(r"\[bulkhead\] vm (\S+): (\d+) exit\(s\) on its CPUs since boot, (\d+) for interrupts "
                         r"\(interrupts: direct\)")


def sgi_dropped(hyp_lines: list[str]) -> dict[str, int]:
    """``{vm: n}`` from the hypervisor's dropped-SGI lines of direct VMs (a
    count since boot: the last line of a VM wins)."""
    return {m.group(1): int(m.group(2)) for m in map(_SGI_LINE.fullmatch, hyp_lines) if m}


def _still_running(lines: list[str]) -> str:
    """``"; still running: vm (last line: ...), ..."`` for the VMs that
    started and had not ended when QEMU was killed ("" when none): where a
    run that timed out was waiting."""
    running: dict[str, bool] = {}
    for line in lines:
        m = _VM_STATE_RE.match(line)
        if m:
            running[m.group(1)] = m.group(2) == "first guest instruction"
    names = [vm for vm, on in running.items() if on]
    if not names:
        return ""
    parts = []
    for vm in names:
        said = vm_lines(lines, vm)
        last = said[-1] if said else ""
        if len(last) > _LAST_LINE_MAX:
            last = last[:_LAST_LINE_MAX] + "..."
        parts.append(f"{vm} (last line: {last!r})" if said else f"{vm} (printed nothing)")
    return "; still running: " + ", ".join(parts)


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
        return False, f"timed out{after} (QEMU killed){_still_running(lines)}"
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
