# SPDX-License-Identifier: Apache-2.0
"""The benchmark guests' ``result`` lines and what a run's row holds.

Every benchmark guest prints machine-readable lines

    result bench=<guest> key=value key=value ...

(guests/lib/include/bench.h). This module parses them, reduces the lines of
one run to the metric columns of ``results.csv`` and names each guest's
primary metric (the one slowdowns are computed from).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from bulkhead.experiment.workloads import WORKLOAD_COLUMNS, ns_per_iter

RESULT_PREFIX = "result "
_TOKEN_RE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(\S*)")


@dataclass(frozen=True)
class Metric:
    """A guest's primary metric: its column and which way is better."""

    column: str
    lower_is_better: bool
    unit: str


# Primary metric per benchmark guest (a spec may choose another column).
GUEST_METRICS: dict[str, Metric] = {
    "bandwidth": Metric("ns_per_line", True, "ns/line"),
    "latency": Metric("ns_per_access", True, "ns/access"),
    "stride": Metric("min_mbps", False, "MB/s"),
    "irqlat": Metric("p99_ns", True, "ns"),
    "interferer": Metric("mbps", False, "MB/s"),
    "ioclient": Metric("rtt_mean_us", True, "us"),
    "mibench": Metric("ns_per_iter", True, "ns/iter"),
}

# Metric columns of results.csv, in order, with their direction and unit.
METRIC_COLUMNS: dict[str, Metric] = {
    "mbps": Metric("mbps", False, "MB/s"),  # all vCPUs together
    "mbps_per_cpu": Metric("mbps_per_cpu", False, "MB/s"),
    "ns_per_line": Metric("ns_per_line", True, "ns/line"),
    "ns_per_access": Metric("ns_per_access", True, "ns/access"),
    "min_mbps": Metric("min_mbps", False, "MB/s"),
    "max_mbps": Metric("max_mbps", False, "MB/s"),
    "slowest_step": Metric("slowest_step", False, "B"),
    "min_ns": Metric("min_ns", True, "ns"),
    "mean_ns": Metric("mean_ns", True, "ns"),
    "p50_ns": Metric("p50_ns", True, "ns"),
    "p99_ns": Metric("p99_ns", True, "ns"),
    "max_ns": Metric("max_ns", True, "ns"),
    "cpus": Metric("cpus", False, ""),
    "interf_mbps": Metric("interf_mbps", False, "MB/s"),  # other VMs' interferers together
    "interf_cpus": Metric("interf_cpus", False, ""),
    # the shared-I/O echo client (guests/ioclient, "ioclient: result ..."), virtual counter time
    "fps": Metric("fps", False, "frames/s"),
    "rtt_min_us": Metric("rtt_min_us", True, "us"),
    "rtt_mean_us": Metric("rtt_mean_us", True, "us"),
    "rtt_max_us": Metric("rtt_max_us", True, "us"),
    # the benchmark's own duration (the VM under test's longest vCPU), for the validity checks
    "bench_ns": Metric("bench_ns", True, "ns"),
}
# The Linux workloads' columns (cyclictest, stress-ng, iperf3, ping; docs/workloads.md).
METRIC_COLUMNS.update({c: Metric(c, lower, unit) for c, (lower, unit) in WORKLOAD_COLUMNS.items()})

EXTRA_COLUMNS: set[str] = set()  # registered by specs (register_metric): the mean of the key

# Result lines of guests that print "<guest>: result k=v ..." instead of
# "result bench=<guest> ..." (guests/ioclient): read as bench=<guest>.
_GUEST_RESULT_RE = re.compile(r"([a-z][a-z0-9_-]*): result (.*)\Z")


def register_metric(metric: Metric) -> None:
    """A further metric column (a spec's ``metrics:``, e.g. a Linux workload's
    result keys); an existing column keeps its definition. A Linux workload's
    column (cyclictest's ``lat_max_us``...) named this way is also read from
    ``result`` lines of bare-metal guests."""
    if metric.column not in METRIC_COLUMNS or metric.column in WORKLOAD_COLUMNS:
        EXTRA_COLUMNS.add(metric.column)
    METRIC_COLUMNS.setdefault(metric.column, metric)


def parse_result_line(line: str) -> dict[str, str] | None:
    """``{key: value}`` of one ``result ...`` line, or None for other lines."""
    if not line.startswith(RESULT_PREFIX):
        m = _GUEST_RESULT_RE.match(line)
        if m is None:
            return None
        return {"bench": m[1], **dict(_TOKEN_RE.findall(m[2]))}
    fields = dict(_TOKEN_RE.findall(line[len(RESULT_PREFIX):]))
    return fields if "bench" in fields else None


def parse_results(lines: Iterable[str]) -> list[dict[str, str]]:
    """Every result line among ``lines``, in order (``lines``: a VM's whole
    lines, as :meth:`bulkhead.run.result.RunResult.lines` gives them)."""
    joined = list(lines)
    found = (parse_result_line(line) for line in joined)
    return [r for r in found if r is not None]


def number(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        return None


def _values(rows: Sequence[Mapping[str, str]], key: str) -> list[float]:
    return [v for v in (number(r.get(key)) for r in rows) if v is not None]


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def reduce_metrics(
    guest: str, own: Sequence[Mapping[str, str]], others: Sequence[Mapping[str, str]]
) -> dict[str, float]:
    """The metric columns of one run.

    ``own``: result lines of the VM under test, ``others``: those of every
    other VM (interferers). Per-vCPU lines are combined: bandwidths add up
    (``mbps``) or average (``mbps_per_cpu``), times per access average.
    """
    mine = [r for r in own if r.get("bench") == guest]
    out: dict[str, float] = {}

    def put(key: str, value: float | None) -> None:
        if value is not None:
            out[key] = value

    if guest == "stride":
        summary = [r for r in mine if r.get("kind") == "summary"]
        if summary:
            for key in ("min_mbps", "max_mbps", "slowest_step"):
                put(key, number(summary[-1].get(key)))
        steps = [r for r in mine if r.get("kind") == "step"]
        put("ns_per_line", _mean(_values(steps, "ns_per_line")))
        put("bench_ns", sum(_values(steps, "ns")) or None)
        put("cpus", 1.0 if mine else None)
    else:
        per_cpu = _values(mine, "mbps")
        if per_cpu:
            put("mbps", sum(per_cpu))
            put("mbps_per_cpu", _mean(per_cpu))
        for key in ("ns_per_line", "ns_per_access", "min_ns", "mean_ns", "p50_ns", "p99_ns", "fps",
                    "rtt_min_us", "rtt_mean_us"):
            put(key, _mean(_values(mine, key)))
        put("rtt_max_us", max(_values(mine, "rtt_max_us"), default=None))
        spans = _values(mine, "ns") or [1000 * v for v in _values(mine, "elapsed_us")] or [
            1000 * s * p for s, p in zip(_values(mine, "samples"), _values(mine, "period_us"), strict=False)]
        put("bench_ns", max(spans, default=None))
        put("max_ns", max(_values(mine, "max_ns"), default=None))
        if mine:
            put("cpus", float(len({r.get("cpu", str(i)) for i, r in enumerate(mine)})))
    if guest == "mibench":  # one vCPU; each line one kernel's ns over its iterations
        put("ns_per_iter", ns_per_iter(mine))
        put("cpus", 1.0 if mine else None)
    for key in sorted(EXTRA_COLUMNS):
        put(key, _mean(_values(mine, key)))
    interf = [r for r in others if r.get("bench") == "interferer"]
    if interf:
        put("interf_mbps", sum(_values(interf, "mbps")))
        put("interf_cpus", float(len(interf)))
    return out


def guest_failures(lines: Iterable[str], guest: str) -> list[str]:
    """The guest's own FAIL lines (``<guest>: FAIL ...``)."""
    prefix = f"{guest}: FAIL"
    return [line for line in lines if line.startswith(prefix)]


def guest_passed(lines: Sequence[str], guest: str) -> bool:
    return any(line.startswith(f"{guest}: PASS") for line in lines)
