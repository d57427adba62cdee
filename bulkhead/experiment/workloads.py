# SPDX-License-Identifier: Apache-2.0
"""Real workloads in the Linux guests: their console output as CSV rows.

A Linux VM booted with the workload initramfs (``scripts/setup.sh
workloads``, docs/workloads.md) runs the command of its kernel command line
``bulkhead.run="..."`` and frames the command's output with

    bulkhead-run: begin at <uptime> s: <command>
    ...
    bulkhead-run: end at <uptime> s: status=<exit status>

This module finds those blocks in a VM's console lines (the hypervisor's
``[vm]`` prefix removed) and parses what Debian's tools print into them:

- ``cyclictest`` (rt-tests): the per-thread summary line
  ``T: 0 ( 96) P:90 I:1000 C: 500 Min: 14 Act: 15 Avg: 36 Max: 734`` (µs),
  and with ``-h N`` the latency histogram (:mod:`bulkhead.experiment.cyclichist`);
- ``stress-ng --metrics-brief``: ``stress-ng: metrc: [pid] <stressor>
  <bogo ops> <real s> <usr s> <sys s> <bogo ops/s real> <bogo ops/s usr+sys>``
  (``info:`` instead of ``metrc:`` in releases before 0.15);
- ``iperf3 --json``: the JSON document (the sender's and the receiver's
  totals, UDP loss and jitter);
- ``ping`` (busybox or iputils): the packet and round-trip summary lines;
- ``mibench`` (this project's kernels, guests/mibench/linux): its
  ``result bench=mibench kernel=...`` lines, as the bare-metal guest's.

:func:`result_fields` turns them into ``result``-line fields (one dict per
cyclictest thread, stress-ng stressor, iperf3 run or ping run, keyed
``bench=<tool>``), the rows of ``results-lines.csv``; :func:`reduce_workload`
reduces one run's fields to the metric columns of ``results.csv``
(:data:`WORKLOAD_COLUMNS`); :func:`failure` says why a run did not succeed.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from bulkhead.experiment import cyclichist
from bulkhead.run.hostpeer import IPERF3_PORT as IPERF3_PORT
from bulkhead.run.hostpeer import USER_NET_HOST as USER_NET_HOST
from bulkhead.run.hostpeer import host_peer as host_peer
from bulkhead.run.hostpeer import iperf3_server_port as iperf3_server_port

# The tools a spec can name (``workload:``), with their metric column.
WORKLOADS = ("cyclictest", "stress-ng", "iperf3", "ping", "mibench")

BEGIN_RE = re.compile(r"bulkhead-run: begin at ([\d.]+) s: (.*)\Z")
END_RE = re.compile(r"bulkhead-run: end at ([\d.]+) s: status=(\d+)\Z")
RUN_ARG = "bulkhead.run"

# Metric columns (column -> (lower is better, unit)); results.py adds them
# to results.csv's metric columns.
WORKLOAD_COLUMNS: dict[str, tuple[bool, str]] = {
    "lat_min_us": (True, "us"),  # cyclictest: smallest Min of the threads
    "lat_avg_us": (True, "us"),  # cyclictest: mean of the threads' Avg
    "lat_max_us": (True, "us"),  # cyclictest: largest Max of the threads
    "lat_p50_us": (True, "us"),  # cyclictest -h: percentiles over all threads' samples (cyclichist.py)
    "lat_p99_us": (True, "us"),
    "lat_p999_us": (True, "us"),
    "lat_overflows": (True, "samples"),  # cyclictest -h: samples beyond the histogram
    "bogo_ops_s": (False, "bogo ops/s"),  # stress-ng: the stressors' bogo ops/s (real time), summed
    "net_mbit_s": (False, "Mbit/s"),  # iperf3: sender's bytes over the sender's (guest) time
    "net_rx_mbit_s": (False, "Mbit/s"),  # iperf3: receiver's bytes over the receiver's time
    "net_loss_pct": (True, "%"),  # iperf3 UDP datagrams or ping packets lost
    "rtt_min_ms": (True, "ms"),  # ping
    "rtt_avg_ms": (True, "ms"),
    "rtt_max_ms": (True, "ms"),
    "interf_bogo_ops_s": (False, "bogo ops/s"),  # stress-ng of the other VMs, summed
    "ns_per_iter": (True, "ns/iter"),  # mibench (also the bare-metal guest's): ns / iterations, mean of the kernels
}

# Each tool's primary metric column (what slowdowns are computed from).
PRIMARY: dict[str, str] = {
    "cyclictest": "lat_max_us",
    "stress-ng": "bogo_ops_s",
    "iperf3": "net_mbit_s",
    "ping": "rtt_avg_ms",
    "mibench": "ns_per_iter",
}


class ParseError(ValueError):
    """A tool's output is there but not in the expected form."""


@dataclass(frozen=True)
class Block:
    """One ``bulkhead.run`` command and what it printed."""

    command: str
    begin_s: float
    end_s: float | None  # None: the VM stopped before the end marker
    status: int | None
    lines: tuple[str, ...]

    @property
    def tool(self) -> str:
        """The command's first word (its program's name)."""
        words = self.command.split()
        return words[0].rsplit("/", 1)[-1] if words else ""


def blocks(lines: Iterable[str]) -> list[Block]:
    """Every ``bulkhead-run`` block among a VM's console lines, in order."""
    found: list[Block] = []
    current: tuple[str, float, list[str]] | None = None
    for raw in lines:
        line = raw.rstrip("\r")
        m = BEGIN_RE.match(line)
        if m:
            if current is not None:
                found.append(Block(current[0], current[1], None, None, tuple(current[2])))
            current = (m[2], float(m[1]), [])
            continue
        m = END_RE.match(line)
        if m and current is not None:
            found.append(Block(current[0], current[1], float(m[1]), int(m[2]), tuple(current[2])))
            current = None
            continue
        if current is not None:
            current[2].append(line)
    if current is not None:
        found.append(Block(current[0], current[1], None, None, tuple(current[2])))
    return found


# --- cyclictest ------------------------------------------------------------------

_CYCLIC_RE = re.compile(
    r"T:\s*(\d+)\s+\(\s*(\d+)\)\s+P:\s*(\d+)\s+I:\s*(\d+)\s+C:\s*(\d+)\s+"
    r"Min:\s*(\d+)\s+Act:\s*(\d+)\s+Avg:\s*(\d+)\s+Max:\s*(\d+)"
)


@dataclass(frozen=True)
class CyclictestThread:
    thread: int
    tid: int
    priority: int
    interval_us: int
    cycles: int
    min_us: int
    act_us: int
    avg_us: int
    max_us: int


def parse_cyclictest(lines: Iterable[str]) -> list[CyclictestThread]:
    """The last summary line of each thread (cyclictest prints one per thread
    on exit with ``-q``, or refreshes them while it runs)."""
    threads: dict[int, CyclictestThread] = {}
    for line in lines:
        m = _CYCLIC_RE.search(line)
        if m:
            v = [int(x) for x in m.groups()]
            threads[v[0]] = CyclictestThread(*v)
    return [threads[k] for k in sorted(threads)]


# --- stress-ng ---------------------------------------------------------------------

_NUM = r"(\d+(?:\.\d+)?)"
_STRESS_RE = re.compile(
    r"stress-ng: (?:metrc|info):\s+\[\d+\]\s+([a-z][\w-]*)\s+(\d+)\s+" + r"\s+".join([_NUM] * 5) + r"\s*\Z"
)


@dataclass(frozen=True)
class StressNgMetric:
    stressor: str
    bogo_ops: int
    real_s: float
    usr_s: float
    sys_s: float
    ops_per_s_real: float
    ops_per_s_cpu: float  # per second of usr+sys time


def parse_stress_ng(lines: Sequence[str]) -> list[StressNgMetric]:
    """One entry per stressor: from the YAML document of ``--yaml FILE``
    printed to the console (``... --metrics-brief --yaml /tmp/m.yaml && cat
    /tmp/m.yaml``: without ``--metrics`` or ``--metrics-brief`` it has no
    ``metrics``), which has more digits, else from the ``--metrics-brief``
    table."""
    from_yaml = _stress_ng_yaml(lines)
    if from_yaml:
        return from_yaml
    out: list[StressNgMetric] = []
    for line in lines:
        m = _STRESS_RE.search(line)
        if m:
            out.append(StressNgMetric(m[1], int(m[2]), float(m[3]), float(m[4]), float(m[5]), float(m[6]),
                                      float(m[7])))
    return out


def _stress_ng_yaml(lines: Sequence[str]) -> list[StressNgMetric]:
    """The ``metrics`` of stress-ng's YAML document (``---`` to ``...``)."""
    try:
        start = lines.index("---")
        end = lines.index("...", start)
    except ValueError:
        return []
    try:
        doc = yaml.safe_load("\n".join(lines[start:end + 1]))
    except yaml.YAMLError as exc:
        raise ParseError(f"stress-ng YAML output unreadable: {exc}") from None
    metrics = doc.get("metrics") if isinstance(doc, dict) else None
    if not isinstance(metrics, list):
        return []
    out: list[StressNgMetric] = []
    for item in metrics:
        if not isinstance(item, dict) or "stressor" not in item:
            raise ParseError(f"stress-ng YAML: a metrics entry without 'stressor': {item!r}")
        out.append(StressNgMetric(
            str(item["stressor"]), int(_num(item, "bogo-ops")), _num(item, "wall-clock-time"),
            _num(item, "user-time"), _num(item, "system-time"), _num(item, "bogo-ops-per-second-real-time"),
            _num(item, "bogo-ops-per-second-usr-sys-time")))
    return out


def stress_ng_failed(lines: Iterable[str]) -> str | None:
    """stress-ng's own report of failed or untrustworthy stressors, if any."""
    for line in lines:
        if re.search(r"stress-ng: (?:fail|error):", line) or re.search(r"unsuccessful run completed", line):
            return line.strip()
    return None


# --- iperf3 -------------------------------------------------------------------------


@dataclass(frozen=True)
class IperfResult:
    protocol: str  # TCP | UDP
    duration_s: float  # the sender's measured time
    sent_bytes: int
    sent_bps: float  # bits per second in the sender's (guest) clock
    received_bytes: int
    received_bps: float  # bits per second in the receiver's clock
    retransmits: int | None  # TCP
    lost_percent: float | None  # UDP
    jitter_ms: float | None  # UDP


def _json_documents(lines: Sequence[str]) -> list[Any]:
    """The top-level JSON objects among ``lines`` (each from a line ``{`` to a line ``}``)."""
    docs: list[Any] = []
    start: int | None = None
    for i, line in enumerate(lines):
        text = line.strip()
        if start is None and text == "{":
            start = i
        elif start is not None and line.rstrip() == "}":
            try:
                docs.append(json.loads("\n".join(lines[start:i + 1])))
            except json.JSONDecodeError as exc:
                raise ParseError(f"iperf3 JSON output unreadable: {exc}") from None
            start = None
    return docs


def _num(doc: Mapping[str, Any], key: str) -> float:
    value = doc.get(key)
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise ParseError(f"no number '{key}' in {sorted(doc)}")
    return float(value)


def parse_iperf3(lines: Sequence[str]) -> list[IperfResult]:
    """Every ``iperf3 --json`` run among ``lines``; ParseError on an error report."""
    out: list[IperfResult] = []
    for doc in _json_documents(lines):
        if not isinstance(doc, dict) or "end" not in doc and "error" not in doc:
            continue
        if doc.get("error"):
            raise ParseError(f"iperf3: {doc['error']}")
        end = doc["end"]
        start = doc.get("start", {})
        protocol = str(start.get("test_start", {}).get("protocol", "TCP"))
        sent = end.get("sum_sent") or end.get("sum")
        received = end.get("sum_received") or end.get("sum")
        if not isinstance(sent, dict) or not isinstance(received, dict):
            raise ParseError("iperf3 JSON: no end.sum_sent/sum_received (or end.sum)")
        udp = protocol == "UDP"
        summary = end.get("sum") if udp and isinstance(end.get("sum"), dict) else received
        retr = sent.get("retransmits")
        out.append(IperfResult(
            protocol=protocol,
            duration_s=_num(sent, "seconds"),
            sent_bytes=int(_num(sent, "bytes")),
            sent_bps=_num(sent, "bits_per_second"),
            received_bytes=int(_num(received, "bytes")),
            received_bps=_num(received, "bits_per_second"),
            retransmits=int(retr) if isinstance(retr, int) and not udp else None,
            lost_percent=_num(summary, "lost_percent") if udp else None,
            jitter_ms=_num(summary, "jitter_ms") if udp else None,
        ))
    return out


# --- ping ----------------------------------------------------------------------------

_PING_COUNT_RE = re.compile(r"(\d+) packets transmitted, (\d+) (?:packets )?received,.*?([\d.]+)% packet loss")
_PING_RTT_RE = re.compile(r"(?:round-trip|rtt) min/avg/max(?:/mdev)? = ([\d.]+)/([\d.]+)/([\d.]+)")


@dataclass(frozen=True)
class PingResult:
    transmitted: int
    received: int
    loss_percent: float
    rtt_min_ms: float | None  # None when nothing came back
    rtt_avg_ms: float | None
    rtt_max_ms: float | None


def parse_ping(lines: Iterable[str]) -> list[PingResult]:
    """The summary of every ping run (busybox's ``round-trip`` or iputils' ``rtt`` line)."""
    out: list[PingResult] = []
    pending: tuple[int, int, float] | None = None
    for line in lines:
        m = _PING_COUNT_RE.search(line)
        if m:
            if pending is not None:
                out.append(PingResult(*pending, None, None, None))
            pending = (int(m[1]), int(m[2]), float(m[3]))
            continue
        m = _PING_RTT_RE.search(line)
        if m and pending is not None:
            out.append(PingResult(*pending, float(m[1]), float(m[2]), float(m[3])))
            pending = None
    if pending is not None:
        out.append(PingResult(*pending, None, None, None))
    return out


# --- mibench ------------------------------------------------------------------------

_MIBENCH_RE = re.compile(r"result (bench=mibench (?:\S+=\S+ ?)*)\Z")


def parse_mibench(lines: Iterable[str]) -> list[dict[str, str]]:
    """The fields of each ``result bench=mibench kernel=...`` line (one per kernel)."""
    out = []
    for line in lines:
        m = _MIBENCH_RE.search(line.strip())
        if m:
            out.append(dict(kv.split("=", 1) for kv in m[1].split()))
    return out


def ns_per_iter(rows: Sequence[Mapping[str, str]]) -> float | None:
    """The mean over mibench's kernels of ``ns`` / ``iterations``, or None."""
    vals = [float(r["ns"]) / float(r["iterations"]) for r in rows
            if r.get("bench") == "mibench" and _is_num(r.get("ns")) and _is_num(r.get("iterations"))
            and float(r["iterations"]) > 0]
    return sum(vals) / len(vals) if vals else None


def _is_num(text: str | None) -> bool:
    try:
        float(text or "")
    except ValueError:
        return False
    return True


# --- rows ------------------------------------------------------------------------------


def _fmt(value: float) -> str:
    return f"{value:.6g}"


def result_fields(lines: Iterable[str], strict: bool = True) -> list[dict[str, str]]:
    """The ``result``-line fields of every workload output in a VM's console
    lines: ``bench`` (the tool), ``block`` (its run's index) and the values.
    ParseError on an iperf3 error report or unreadable JSON, unless not
    ``strict`` (that block is skipped: :func:`failure` says why)."""
    rows: list[dict[str, str]] = []
    for i, blk in enumerate(blocks(lines)):
        head = {"block": str(i), "begin_s": _fmt(blk.begin_s)}
        if blk.end_s is not None:
            head["end_s"] = _fmt(blk.end_s)
        if held(blk.lines):
            head["barrier"] = "held"
        try:
            iperf = parse_iperf3(blk.lines)
            stress = parse_stress_ng(blk.lines)
            hists = cyclichist.parse(blk.lines)
        except (ParseError, cyclichist.HistogramError) as exc:
            if strict:
                raise ParseError(str(exc)) from None
            iperf, stress, hists = [], [], []
        rows += _cyclictest_rows(head, blk.lines, hists)
        for s in stress:
            rows.append({"bench": "stress-ng", **head, "stressor": s.stressor, "bogo_ops": str(s.bogo_ops),
                         "real_s": _fmt(s.real_s), "bogo_ops_s": _fmt(s.ops_per_s_real),
                         "bogo_ops_s_cpu": _fmt(s.ops_per_s_cpu)})
        for r in iperf:
            row = {"bench": "iperf3", **head, "protocol": r.protocol, "seconds": _fmt(r.duration_s),
                   "sent_bytes": str(r.sent_bytes), "mbit_s": _fmt(r.sent_bps / 1e6),
                   "received_bytes": str(r.received_bytes), "rx_mbit_s": _fmt(r.received_bps / 1e6)}
            if r.retransmits is not None:
                row["retransmits"] = str(r.retransmits)
            if r.lost_percent is not None and r.jitter_ms is not None:
                row.update(loss_pct=_fmt(r.lost_percent), jitter_ms=_fmt(r.jitter_ms))
            rows.append(row)
        for p in parse_ping(blk.lines):
            row = {"bench": "ping", **head, "transmitted": str(p.transmitted), "received": str(p.received),
                   "loss_pct": _fmt(p.loss_percent)}
            if p.rtt_avg_ms is not None:
                assert p.rtt_min_ms is not None and p.rtt_max_ms is not None
                row.update(rtt_min_ms=_fmt(p.rtt_min_ms), rtt_avg_ms=_fmt(p.rtt_avg_ms),
                           rtt_max_ms=_fmt(p.rtt_max_ms))
            rows.append(row)
        rows.extend({**fields, **head} for fields in parse_mibench(blk.lines))
    return rows


def held(lines: Sequence[str]) -> bool:
    """Whether a start-barrier peer's block shows that its command ran from
    before the lead's measurement to after it: it acknowledged the lead's
    token while running and was still running when the lead was done
    (scripts/mkinitrd.sh's /init, docs/workloads.md)."""
    acked = next((i for i, x in enumerate(lines) if x.startswith("bulkhead-sync: running, acknowledged")), None)
    return acked is not None and any(x.startswith("bulkhead-sync: lead done") for x in lines[acked:])


def _cyclictest_rows(head: dict[str, str], lines: Sequence[str],
                     hists: Sequence[cyclichist.Histogram]) -> list[dict[str, str]]:
    """One row per thread: from the ``T:`` lines, completed (or, with ``-h``
    and ``-q``, replaced) by the thread's histogram."""
    by_thread: dict[int, dict[str, str]] = {}
    for t in parse_cyclictest(lines):
        by_thread[t.thread] = {"bench": "cyclictest", **head, "cpu": str(t.thread), "priority": str(t.priority),
                               "interval_us": str(t.interval_us), "cycles": str(t.cycles),
                               "min_us": str(t.min_us), "avg_us": str(t.avg_us), "max_us": str(t.max_us)}
    for h in hists:
        by_thread.setdefault(h.thread, {"bench": "cyclictest", **head}).update(cyclichist.fields(h))
    return [by_thread[k] for k in sorted(by_thread)]


def _values(rows: Sequence[Mapping[str, str]], key: str) -> list[float]:
    out: list[float] = []
    for r in rows:
        try:
            out.append(float(r[key]))
        except (KeyError, ValueError):
            continue
    return out


def reduce_workload(own: Sequence[Mapping[str, str]], others: Sequence[Mapping[str, str]] = ()) -> dict[str, float]:
    """The metric columns of one run from :func:`result_fields` rows: ``own``
    of the VM under test, ``others`` of the other VMs (their stress-ng
    bogo ops/s become ``interf_bogo_ops_s``)."""
    out: dict[str, float] = {}
    cyc = [r for r in own if r.get("bench") == "cyclictest"]
    if cyc:
        out["lat_min_us"] = min(_values(cyc, "min_us"))
        avg = _values(cyc, "avg_us")
        out["lat_avg_us"] = sum(avg) / len(avg)
        out["lat_max_us"] = max(_values(cyc, "max_us"))
        out["cpus"] = float(len({r.get("cpu") for r in cyc}))
        out.update(cyclichist.reduce(cyc))
    stress = _values([r for r in own if r.get("bench") == "stress-ng"], "bogo_ops_s")
    if stress:
        out["bogo_ops_s"] = sum(stress)
    iperf = [r for r in own if r.get("bench") == "iperf3"]
    if iperf:
        out["net_mbit_s"] = sum(_values(iperf, "mbit_s")) / len(iperf)
        out["net_rx_mbit_s"] = sum(_values(iperf, "rx_mbit_s")) / len(iperf)
        loss = _values(iperf, "loss_pct")
        if loss:
            out["net_loss_pct"] = max(loss)
    pings = [r for r in own if r.get("bench") == "ping"]
    if pings:
        for key in ("rtt_min_ms", "rtt_avg_ms", "rtt_max_ms"):
            vals = _values(pings, key)
            if vals:
                out[key] = min(vals) if key == "rtt_min_ms" else max(vals) if key == "rtt_max_ms" else \
                    sum(vals) / len(vals)
        out.setdefault("net_loss_pct", max(_values(pings, "loss_pct")))
    if (mb := ns_per_iter(own)) is not None:
        out["ns_per_iter"] = mb
    interf = _values([r for r in others if r.get("bench") == "stress-ng"], "bogo_ops_s")
    if interf:
        out["interf_bogo_ops_s"] = sum(interf)
    return out


def failure(lines: Sequence[str], tool: str) -> str | None:
    """Why the workload run in these console lines failed, or None: no block,
    no end marker, a non-zero exit status, no output of ``tool`` that parses."""
    if barrier_failed := next((x.strip() for x in lines if x.startswith("bulkhead-sync: FAIL")), None):
        return barrier_failed  # the start barrier (docs/workloads.md): the command did not run
    found = blocks(lines)
    if not found:
        return "no 'bulkhead-run: begin' line (is bulkhead.run= on the kernel command line, " \
               "and the initrd the workload initramfs?)"
    for blk in found:
        if blk.status is None:
            return f"'{blk.command}' did not finish (no 'bulkhead-run: end' line)"
        if blk.status != 0:
            return f"'{blk.command}' exited with status {blk.status}"
        if blk.tool == "stress-ng" and (why := stress_ng_failed(blk.lines)):
            return why
    try:
        rows = result_fields(lines)
    except ParseError as exc:
        return str(exc)
    if not any(r["bench"] == tool for r in rows):
        return f"no {tool} results in the output of the workload"
    return None


def command(workload: str, args: str) -> str:
    """The shell command of a workload benchmark."""
    if workload not in WORKLOADS:
        raise ValueError(f"unknown workload '{workload}' (one of {', '.join(WORKLOADS)})")
    return f"{workload} {args}".strip()


STRESS_NG_YAML = "/tmp/stress-ng.yaml"


def machine_readable(workload: str, args: str) -> str:
    """The arguments of a benchmark's ``args:`` with the tool's
    machine-readable output asked for when they do not ask themselves:
    ``--json`` for iperf3; for stress-ng ``--metrics-brief`` (the YAML has
    no metrics without it) and ``--yaml`` to a file that ``cat`` prints after
    a successful run (:func:`parse_stress_ng` prefers it: more digits)."""
    words = args.split()
    if workload == "iperf3" and not {"--json", "-J"} & set(words):
        return f"{args} --json".strip()
    if workload == "stress-ng" and not any(w in ("--yaml", "-Y") or w.startswith("--yaml=") for w in words):
        if not {"--metrics", "--metrics-brief", "-M"} & set(words):
            args = f"{args} --metrics-brief".strip()
        return f"{args} --yaml {STRESS_NG_YAML} && cat {STRESS_NG_YAML}"
    return args


_RUN_ARG_RE = re.compile(r'(?:^|\s)bulkhead\.run="[^"]*"')


def with_run(bootargs: str, cmd: str) -> str:
    """``bootargs`` with ``bulkhead.run="cmd"`` (replacing any earlier one)."""
    if '"' in cmd:
        raise ValueError(f"a workload command cannot contain '\"' (the kernel command line's quote): {cmd}")
    if any(ord(c) < 0x20 for c in cmd):
        raise ValueError("a workload command must be one line")
    shlex.split(cmd)  # balanced quotes, or ValueError
    rest = _RUN_ARG_RE.sub("", bootargs).strip()
    return f'{rest} {RUN_ARG}="{cmd}"'.strip()


_NET_ARG_RE = re.compile(r"(?:^|\s)bulkhead\.net=(\w+):")


def net_error(config: Mapping[str, Any], vm: Mapping[str, Any]) -> str | None:
    """Why the network ``vm``'s ``bulkhead.net=`` names cannot come up in
    ``config`` (a system config as a mapping), or None: ``virtio:`` needs a
    NIC passed through (``pci: [{qemu: virtio-net-pci}]`` or a virtio-mmio
    slot in ``devices:``) or a place among the shared I/O device's clients
    with ``virtio: net``; ``io:`` (the removed bulkhead_net module's) is
    refused, naming ``virtio:``."""
    m = _NET_ARG_RE.search(str(vm.get("bootargs") or ""))
    name = vm.get("name")
    if m is None:
        return None
    io = config.get("io")
    clients = io.get("clients") if isinstance(io, Mapping) else None
    shared = isinstance(clients, list) and any(isinstance(c, Mapping) and c.get("vm") == name
                                               and c.get("virtio") == "net" for c in clients)
    if m[1] == "io":
        return (f"VM '{name}' has bulkhead.net=io:, which loaded the removed bulkhead_net module: write "
                "bulkhead.net=virtio: and give its io: client 'virtio: net' (Debian's virtio_net, docs/io.md)")
    if m[1] == "virtio" and not vm.get("pci") and not vm.get("devices") and not shared:
        return (f"VM '{name}' has bulkhead.net=virtio: but no NIC passed through and no shared one: give it "
                "'pci: [{qemu: virtio-net-pci}]' (docs/pci.md), a virtio-mmio slot in 'devices:', or "
                "'virtio: net' among 'io: clients:' (docs/io.md)")
    return None
    if m[1] == "virtio" and not vm.get("pci") and not vm.get("devices"):
        return (f"VM '{name}' has bulkhead.net=virtio: but no NIC passed through: give it "
                "'pci: [{qemu: virtio-net-pci}]' (docs/pci.md) or a virtio-mmio slot in 'devices:'")
    if m[1] == "io":
        io = config.get("io")
        clients = io.get("clients") if isinstance(io, Mapping) else None
        if not isinstance(clients, list) or not any(isinstance(c, Mapping) and c.get("vm") == name
                                                    for c in clients):
            return (f"VM '{name}' has bulkhead.net=io: but is not a client of the shared I/O device "
                    "('io: clients:', docs/io.md)")
    return None
