# SPDX-License-Identifier: Apache-2.0
"""cyclictest's latency histogram (``-h N``): parsed, and its percentiles.

With ``-h N`` cyclictest (rt-tests) prints no per-thread ``T:`` summary on
exit but a histogram of 1-µs buckets, one row per bucket and one column per
thread, followed by its summary::

    # Histogram
    000000 000000
    ...
    000014 000998
    ...
    # Total: 000000998
    # Min Latencies: 00014
    # Avg Latencies: 00014
    # Max Latencies: 00210
    # Histogram Overflows: 00002
    # Histogram Overflow at cycle number:
    # Thread 0: 00417 00733

``Total`` counts the samples inside the buckets; a latency of N µs or more
is an *overflow*, counted apart. A percentile is the nearest rank over all
samples (buckets and overflows): the smallest latency L with at least
``ceil(q * n)`` samples at or below L; it is unknown (None) when that rank
lies among the overflows (raise ``-h``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

HEAD = "# Histogram"
_ROW_RE = re.compile(r"(\d{6})((?:\s+\d+)+)\s*\Z")
_SUMMARY_RE = re.compile(r"# (Total|Min Latencies|Avg Latencies|Max Latencies|Histogram Overflows):((?:\s+\d+)+)\s*\Z")
_OVERFLOW_AT_RE = re.compile(r"# Thread (\d+):(.*)\Z")
PERCENTILES = (("p50_us", 0.5), ("p99_us", 0.99), ("p999_us", 0.999))


class HistogramError(ValueError):
    """A histogram is there but incomplete or inconsistent."""


@dataclass(frozen=True)
class Histogram:
    """One thread's histogram: ``buckets[i]`` samples of latency i µs."""

    thread: int
    buckets: tuple[int, ...]
    min_us: int
    avg_us: int
    max_us: int
    overflows: int  # samples of latency >= len(buckets) µs

    @property
    def samples(self) -> int:
        return sum(self.buckets) + self.overflows

    def percentile(self, q: float) -> int | None:
        """The nearest-rank ``q`` quantile in µs, None if it lies among the overflows."""
        return percentile(self.buckets, self.overflows, q)

    def encoded(self) -> str:
        """The non-empty buckets as ``<µs>:<count>`` joined by ``;`` (a CSV field)."""
        return encode(self.buckets)


def percentile(buckets: Sequence[int], overflows: int, q: float) -> int | None:
    """Nearest-rank quantile of a 1-µs histogram (see the module docstring)."""
    n = sum(buckets) + overflows
    if n == 0:
        return None
    rank = max(1, math.ceil(q * n - 1e-9))
    seen = 0
    for us, count in enumerate(buckets):
        seen += count
        if seen >= rank:
            return us
    return None


def encode(buckets: Sequence[int]) -> str:
    return ";".join(f"{us}:{c}" for us, c in enumerate(buckets) if c)


def decode(text: str, size: int) -> list[int]:
    """The buckets of :func:`encode`'s text (``size`` of them); ValueError if malformed."""
    buckets = [0] * size
    for item in filter(None, text.split(";")):
        us, count = (int(x) for x in item.split(":"))
        if not 0 <= us < size or count < 0:
            raise ValueError(f"histogram bucket {item!r} outside 0..{size - 1} µs")
        buckets[us] += count
    return buckets


def parse(lines: Iterable[str]) -> list[Histogram]:
    """The histograms of the last ``# Histogram`` block among ``lines`` (one per
    thread); [] if there is none; HistogramError if it is cut short."""
    rows: list[list[int]] | None = None
    summary: dict[str, list[int]] = {}
    for raw in lines:
        line = raw.strip()
        if line == HEAD:
            rows, summary = [], {}
            continue
        if rows is None:
            continue
        m = _ROW_RE.match(line)
        if m and not summary:
            if int(m[1]) != len(rows):
                raise HistogramError(f"cyclictest histogram: bucket {int(m[1])} where {len(rows)} was due")
            rows.append([int(x) for x in m[2].split()])
            continue
        m = _SUMMARY_RE.match(line)
        if m:
            summary[m[1]] = [int(x) for x in m[2].split()]
    if rows is None:
        return []
    keys = ("Total", "Min Latencies", "Avg Latencies", "Max Latencies", "Histogram Overflows")
    missing = [k for k in keys if k not in summary]
    if not rows or missing:
        raise HistogramError("cyclictest histogram cut short: no " + (", ".join(missing) or "buckets"))
    threads = len(summary["Total"])
    if any(len(summary[k]) != threads for k in keys) or any(len(r) < threads for r in rows):
        raise HistogramError(f"cyclictest histogram: rows and summary disagree on the number of threads ({threads})")
    out = []
    for t in range(threads):
        buckets = tuple(r[t] for r in rows)
        if sum(buckets) != summary["Total"][t]:
            raise HistogramError(f"cyclictest histogram: thread {t}'s buckets hold {sum(buckets)} samples, "
                                 f"its Total says {summary['Total'][t]}")
        out.append(Histogram(t, buckets, summary["Min Latencies"][t], summary["Avg Latencies"][t],
                             summary["Max Latencies"][t], summary["Histogram Overflows"][t]))
    return out


def fields(h: Histogram) -> dict[str, str]:
    """A thread's ``result``-line fields (``results-lines.csv``)."""
    out = {"cpu": str(h.thread), "cycles": str(h.samples), "min_us": str(h.min_us), "avg_us": str(h.avg_us),
           "max_us": str(h.max_us), "overflows": str(h.overflows), "hist_us": str(len(h.buckets)),
           "hist": h.encoded()}
    for key, q in PERCENTILES:
        p = h.percentile(q)
        if p is not None:
            out[key] = str(p)
    return out


def merged(rows: Sequence[Mapping[str, str]]) -> tuple[list[int], int] | None:
    """The buckets and overflows of several threads' or runs' rows summed
    (rows without a histogram are skipped); None if none has one."""
    hists = [r for r in rows if "hist" in r and "hist_us" in r]
    if not hists:
        return None
    size = max(int(r["hist_us"]) for r in hists)
    total = [0] * size
    overflows = 0
    for r in hists:
        for us, c in enumerate(decode(r["hist"], int(r["hist_us"]))):
            total[us] += c
        # a narrower histogram's overflows may lie inside a wider one's range: counted as overflows
        overflows += int(r.get("overflows", "0"))
    return total, overflows


def reduce(rows: Sequence[Mapping[str, str]]) -> dict[str, float]:
    """The ``results.csv`` columns of one run's cyclictest rows: percentiles
    over all threads' samples together, overflows summed."""
    m = merged(rows)
    if m is None:
        return {}
    buckets, overflows = m
    out = {"lat_overflows": float(overflows)}
    for key, q in PERCENTILES:
        p = percentile(buckets, overflows, q)
        if p is not None:
            out["lat_" + key] = float(p)
    return out
