# SPDX-License-Identifier: Apache-2.0
"""``bulkhead run --stats``: the console lines the hypervisor and the I/O VM
print on Ctrl-T b (the regulator's ``bw`` lines, docs/bandwidth.md; a direct
VM's ``sgi`` lines, docs/interrupts.md; the I/O VM's ``iovm: stats`` and
``iovm: disk client=`` lines, docs/io.md) and the live tables drawn from them.
"""

from __future__ import annotations

import io
import re
from typing import TextIO

from bulkhead.base import term
from bulkhead.config import shared_disk, shared_io

STATS_RE = re.compile(
    r"\[bulkhead\] bw vm=(?P<vm>\S+) vcpu=(?P<vcpu>\d+) last=(?P<last>\d+) max=(?P<max>\d+) "
    r"mean=(?P<mean>\d+) throttled=(?P<throttled>\d+) stalled_us=(?P<stalled_us>\d+)\s*$")
STATS_POKE = b"\x14b"  # Ctrl-T b: the hypervisor prints one "bw vm=..." line per regulated vCPU
STATS_FIELDS = ("last", "max", "mean", "throttled", "stalled_us")
STATS_HEAD = ("VM", "VCPU", "LAST", "MAX", "MEAN", "THROTTLED", "STALLED_US")


SGI_STATS_RE = re.compile(r"\[bulkhead\] sgi vm=(?P<vm>\S+) dropped=(?P<dropped>\d+)")
SGI_STATS_HEAD = ("VM", "SGI_WRITES_DROPPED")


def parse_sgi_stats(line: str) -> tuple[str, int] | None:
    """(vm, count) of one ``[bulkhead] sgi vm=... dropped=...`` console line
    (Ctrl-T b: a direct VM's SGI writes dropped or filtered, docs/interrupts.md)."""
    m = SGI_STATS_RE.fullmatch(line)
    return None if m is None else (m["vm"], int(m["dropped"]))


def parse_stats(line: str) -> tuple[str, int, dict[str, int]] | None:
    """(vm, vcpu, values) of one ``[bulkhead] bw vm=...`` console line."""
    m = STATS_RE.match(line)
    if m is None:
        return None
    return m["vm"], int(m["vcpu"]), {k: int(m[k]) for k in STATS_FIELDS}


def stats_timebase(icount: int | None) -> str:
    """What the ``--stats`` figures are measured in: the guest's virtual time
    under ``-icount`` or, without it, host time."""
    if icount is None:
        return "host time, no --icount: not comparable to budgets"
    return f"virtual time, --icount {icount}"


def stats_host_time_warning() -> str:
    """The warning ``run --stats`` prints once, before the run, without --icount."""
    return ("--stats without --icount: the figures are in host time. Periods are in the guest's "
            "counter time but QEMU runs the guests at a host-dependent rate, so events per period "
            "(and whether a VM is on its bandwidth budget) are artefacts of the host, not properties "
            "of the system. Use --icount N (e.g. --icount 0) for figures comparable to the budgets.")


def _plain_table(head: tuple[str, ...], cells: list[tuple[str, ...]], numeric: int) -> list[str]:
    """Columns padded to their widest cell; from index ``numeric`` on, numbers
    (right-aligned)."""
    rows = [head, *cells]
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    return ["  ".join(c.rjust(w) if i > numeric else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=False)))
            for r in rows]


class StatsView(io.TextIOBase):
    """A console stream for ``bulkhead run --stats``: passes the console
    through to ``out`` (if any) except the hypervisor's ``bw`` and ``sgi`` lines and the
    I/O VM's ``iovm: stats`` lines (shared I/O, docs/io.md), which update
    tables drawn on ``err``: live, in place, with rich on a terminal
    (console lines for the same terminal then print above them); plain text,
    the tables per update, otherwise. The titles name the time base
    (``stats_timebase``)."""

    def __init__(self, out: TextIO | None, err: TextIO, timebase: str) -> None:
        super().__init__()
        self.timebase = timebase
        self.out = out
        self.err = err
        self.tty = term.is_tty(err)
        self.live = term.LiveTable(err) if self.tty else None
        self.rows: dict[tuple[str, int], dict[str, int]] = {}
        self.io_rows: dict[str, dict[str, int]] = {}  # shared I/O: per client
        self.disk_rows: dict[str, dict[str, int]] = {}  # shared disk: per client
        self.sgi_rows: dict[str, int] = {}  # direct VMs: SGI writes dropped or filtered
        self.partial = ""
        self.dirty = False
        self.updates = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        lines = (self.partial + text).split("\n")
        self.partial = lines.pop()
        for line in lines:
            parsed = parse_stats(line.rstrip("\r"))
            io_parsed = shared_io.parse_stats(line.rstrip("\r"))
            sgi_parsed = parse_sgi_stats(line.rstrip("\r"))
            disk_parsed = shared_disk.parse_stats(line.rstrip("\r"))
            if disk_parsed is not None:
                self.disk_rows[disk_parsed[0]] = disk_parsed[1]
                self.dirty = True
            elif sgi_parsed is not None:
                self.sgi_rows[sgi_parsed[0]] = sgi_parsed[1]
                self.dirty = True
            elif parsed is not None:
                vm, vcpu, values = parsed
                self.rows[(vm, vcpu)] = values
                self.dirty = True
            elif io_parsed is not None:
                self.io_rows[io_parsed[0]] = io_parsed[1]
                self.dirty = True
            elif self.live is not None and term.is_tty(self.out):
                self.live.print(line)
            elif self.out is not None:
                self.out.write(line + "\n")
        return len(text)

    def flush(self) -> None:
        if self.out is not None:
            self.out.flush()
        if self.dirty:
            self.render()

    def cells(self) -> list[tuple[str, ...]]:
        return [(vm, str(vcpu), *(str(v[k]) for k in STATS_FIELDS)) for (vm, vcpu), v in sorted(self.rows.items())]

    def table(self) -> list[str]:
        return _plain_table(STATS_HEAD, self.cells(), 1)

    def render(self) -> None:
        self.dirty = False
        self.updates += 1
        parts: list[tuple[str, tuple[str, ...], list[tuple[str, ...]], int]] = []
        if self.rows:
            parts.append((f"bandwidth (events per period; {self.timebase}), update {self.updates}:",
                          STATS_HEAD, self.cells(), 1))
        if self.sgi_rows:
            parts.append((f"direct VMs' SGI writes dropped or filtered, update {self.updates}:", SGI_STATS_HEAD,
                          [(vm, str(n)) for vm, n in sorted(self.sgi_rows.items())], 1))
        if self.io_rows:
            parts.append((f"shared I/O per client ({self.timebase}), "
                          f"update {self.updates}:", shared_io.STATS_HEAD, shared_io.stats_cells(self.io_rows), 0))
        if self.disk_rows:
            parts.append((f"shared disk per client ({self.timebase}), update {self.updates}:",
                          shared_disk.STATS_HEAD, shared_disk.stats_cells(self.disk_rows), 0))
        if self.live is not None:
            tables = [(title, term.table(head, cells, right=range(1, len(head)))) for title, head, cells, _ in parts]
            self.live.update(tables[0][0], tables[0][1], *tables[1:])
            return
        text = []
        for title, head, cells, numeric in parts:
            text += [title, *_plain_table(head, cells, numeric)]
        self.err.write("\n".join(text) + "\n")
        self.err.flush()

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None
        if self.partial and self.out is not None:
            self.out.write(self.partial)
        self.partial = ""
        super().close()
