# SPDX-License-Identifier: Apache-2.0
"""Terminal output with ``rich``: tables, a live table and progress bars with
an ETA when the stream is a terminal; the callers keep their plain text for
everything else (pipes, CI, files), so that output stays parseable."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TextIO

from rich import box
from rich.console import Console, Group
from rich.live import Live
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text


def is_tty(stream: TextIO | None) -> bool:
    return bool(stream is not None and getattr(stream, "isatty", lambda: False)())


def console(stream: TextIO) -> Console:
    """A rich console on ``stream`` (a terminal: colours and its width)."""
    return Console(file=stream, highlight=False, soft_wrap=False)


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, title: str | None = None,
          right: Sequence[int] = ()) -> Table:
    """A table of text cells (a cell may hold several lines); columns whose
    index is in ``right`` (numbers) are right-aligned. On a terminal too
    narrow for it, cells wrap (nothing is cut off)."""
    t = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", header_style="bold")
    for i, h in enumerate(headers):
        t.add_column(h, justify="right" if i in right else "left", overflow="fold", min_width=min(len(h), 12))
    for row in rows:
        t.add_row(*row)
    return t


def print_table(stream: TextIO, headers: Sequence[str], rows: Sequence[Sequence[str]], **kw: Any) -> None:
    console(stream).print(table(headers, rows, **kw))


class LiveTable:
    """A table redrawn in place on a terminal (``rich.live``)."""

    def __init__(self, stream: TextIO) -> None:
        self.live = Live(console=console(stream), auto_refresh=False, transient=False)
        self.live.start()

    def update(self, title: str, t: Table, *more: tuple[str, Table]) -> None:
        """Shows ``title`` (a line) above the table, then each further (title, table)."""
        parts: list[Text | Table] = [Text(title), t]
        for extra_title, extra in more:
            parts += [Text(extra_title), extra]
        self.live.update(Group(*parts), refresh=True)

    def print(self, text: str) -> None:
        """A line above the table (the table stays below)."""
        self.live.console.print(text, markup=False)

    def stop(self) -> None:
        self.live.stop()


class ProgressBar:
    """A progress bar with counts, elapsed time and ETA (``rich.progress``)."""

    def __init__(self, stream: TextIO, total: int, what: str) -> None:
        self.progress = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("elapsed"),
            TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(), console=console(stream),
            transient=False)
        self.task: TaskID = self.progress.add_task(what, total=total)
        self.progress.start()

    def advance(self, description: str) -> None:
        self.progress.update(self.task, advance=1, description=description)
        self.progress.refresh()

    def print(self, text: str) -> None:
        """A line above the bar."""
        self.progress.console.print(text, markup=False, highlight=False)

    def stop(self) -> None:
        self.progress.stop()
