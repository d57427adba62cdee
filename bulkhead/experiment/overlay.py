# SPDX-License-Identifier: Apache-2.0
"""Published values beside ours (a plot's ``published:``), honestly.

A paper's value is a point the authors measured, not a curve: it is drawn
as an open black-edged marker, never joined to its neighbours (two published
points joined by a line would draw a curve the paper does not give), and
the caption states, in numbers, how far Bulkhead's value at the same x (the
same scenario and benchmark in a slowdown chart) lies from each published
one, and whether that is within :data:`AGREE` (docs/experiments.md
"Published values").

:func:`draw_points` draws a plot's published points at given positions and
records them in the chart's :class:`~bulkhead.experiment.charts.Drawn`
(role ``published``, with each point's x as the paper gives it);
:func:`comparison` writes the caption's sentence from what the chart drew.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol

AGREE = 0.10  # |ours / published - 1| at most this: "agrees"
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


def _ours(dr: Chart, x: float, benchmark: str) -> list[tuple[str, float]]:
    """(series label, value) of every measured series drawn at ``x``."""
    out = []
    for s in dr.series:
        if s["role"] != "measured" or (benchmark and s.get("benchmark") not in ("", None, benchmark)):
            continue
        for sx, sy in zip(s["x"], s["y"], strict=True):
            if math.isclose(sx, x, rel_tol=1e-9, abs_tol=1e-12):
                out.append((str(s["label"]), float(sy)))
    return out


def _g(v: float) -> str:
    return f"{v:,.4g}"


def verdicts(dr: Chart) -> list[dict[str, Any]]:
    """Per published point: its value, ours at the same x, the relative
    difference and whether it is within :data:`AGREE`."""
    out = []
    for s in dr.series:
        if s["role"] != "published":
            continue
        for x, y, text in zip(s["x"], s["y"], s.get("x_text") or [str(x) for x in s["x"]], strict=True):
            ours = _ours(dr, x, str(s.get("benchmark") or ""))
            out.append({"source": s.get("source", s["label"]), "x": text, "published": y, "ours": [
                {"series": lab, "value": v, "diff": (v / y - 1) if y else None,
                 "agrees": bool(y) and abs(v / y - 1) <= AGREE} for lab, v in ours]})
        out += [{"source": s.get("source", s["label"]), "x": x, "published": y, "ours": []}
                for x, y in s.get("unplaced") or []]
    return out


def comparison(dr: Chart) -> str:
    """The caption's statement of agreement, in numbers, per published value."""
    parts = []
    for v in verdicts(dr):
        head = f"{v['source']} at {v['x']}: published {_g(v['published'])}"
        if not v["ours"]:
            parts.append(head + ", no Bulkhead value there (not run, not drawn or not comparable)")
            continue
        ours = ", ".join(f"{o['series']} {_g(o['value'])}" + (
            f" ({o['diff']:+.1%}: {'agrees' if o['agrees'] else 'disagrees'})" if o["diff"] is not None else "")
            for o in v["ours"])
        parts.append(f"{head}, Bulkhead {ours}")
    if not parts:
        return ""
    return (f"Published against Bulkhead (agrees: within {AGREE:.0%} of the published value): "
            + "; ".join(parts) + ".")
