# SPDX-License-Identifier: Apache-2.0
"""Published values beside ours (a plot's ``published:``), honestly.

A paper's value is a point the authors measured, not a curve: it is drawn
as an open black-edged marker, never joined to its neighbours (two published
points joined by a line would draw a curve the paper does not give).
How far Bulkhead's value lies from each published one, and whether it
matches, is :mod:`bulkhead.experiment.agreement`'s (docs/experiments.md
"Published values").

:func:`draw_points` draws a plot's published points at given positions and
records them in the chart's :class:`~bulkhead.experiment.charts.Drawn`
(role ``published``, with each point's x as the paper gives it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

EDGE = "black"


class Chart(Protocol):
    """What :func:`draw_points` needs of a chart's record (charts.Drawn)."""

    series: list[dict[str, Any]]

    def style(self) -> tuple[str, str, str]: ...

    def add(self, role: str, label: str, color: str, marker: str, xs: Sequence[float], ys: Sequence[float],
            runs: Sequence[int] = ()) -> None: ...


def draw_points(ax: Any, dr: Chart, label: str, xs: Sequence[float], ys: Sequence[float],
                x_text: Sequence[str], benchmark: str = "", unplaced: Sequence[tuple[str, float]] = ()) -> None:
    """One published series: open markers only (no line, no fill);
    ``unplaced``: (x as the paper gives it, value) of points the chart has no
    place for (e.g. a scenario it does not draw), named in the caption."""
    _, marker, _ = dr.style()
    if xs:
        ax.scatter(xs, ys, marker=marker, s=60, facecolors="none", edgecolors=EDGE, linewidths=1.2, zorder=5,
                   label=f"published: {label}")
    dr.add("published", f"published: {label}", "none", marker, xs, ys)
    dr.series[-1].update(edge=EDGE, joined=False, x_text=list(x_text), benchmark=benchmark, source=label,
                         unplaced=[[x, v] for x, v in unplaced])
