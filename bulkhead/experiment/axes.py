# SPDX-License-Identifier: Apache-2.0
"""What a chart's axes, legends and captions say in words: a swept key or a
metric column with its unit, whose value a line is, and what one
bandwidth-regulation event is on the platform (per core type, with the PMU
event's name, and what QEMU counts instead)."""

from __future__ import annotations

from bulkhead.config.bandwidth import event_name
from bulkhead.config.bwspec import BwEventSpec
from bulkhead.config.model import Platform
from bulkhead.experiment.results import METRIC_COLUMNS
from bulkhead.experiment.spec import ExperimentSpec, PlotSpec

# A swept key's last component: (what it is, unit); {vm} is the VM the key is under.
SWEEP_AXES: dict[str, tuple[str, str]] = {
    "budget_events": ("bandwidth budget of VM {vm}", "events per period"),
    "write_budget_events": ("write-bandwidth budget of VM {vm}", "events per period"),
    "budget_mbps": ("bandwidth budget of VM {vm}", "MB/s"),
    "write_budget_mbps": ("write-bandwidth budget of VM {vm}", "MB/s"),
    "period_us": ("regulation period of VM {vm}", "µs"),
    "size": ("buffer size of VM {vm}", "bytes"),
    "footprint": ("memory footprint of VM {vm}", "bytes"),
}

# What a metric column measures; {vm} is the VM under test.
METRIC_TEXT: dict[str, str] = {
    "mbps": "bandwidth of VM {vm}",
    "mbps_per_cpu": "bandwidth per vCPU of VM {vm}",
    "ns_per_line": "time per cache line of VM {vm}",
    "ns_per_access": "time per dependent access of VM {vm}",
    "min_mbps": "lowest bandwidth over the stride sweep of VM {vm}",
    "max_mbps": "highest bandwidth over the stride sweep of VM {vm}",
    "slowest_step": "slowest stride of VM {vm}",
    "min_ns": "minimum interrupt latency in VM {vm}",
    "mean_ns": "mean interrupt latency in VM {vm}",
    "p50_ns": "median interrupt latency in VM {vm}",
    "p99_ns": "99th-percentile interrupt latency in VM {vm}",
    "max_ns": "maximum interrupt latency in VM {vm}",
    "cpus": "vCPUs of VM {vm}",
    "interf_mbps": "total bandwidth of the interfering VMs",
    "interf_cpus": "vCPUs of the interfering VMs",
    "fps": "frames per second exchanged by VM {vm}",
    "rtt_min_us": "shortest round trip of VM {vm}",
    "rtt_mean_us": "mean round trip of VM {vm}",
    "rtt_max_us": "longest round trip of VM {vm}",
    "bench_ns": "duration of the benchmark in VM {vm}",
}


def _with_unit(text: str, unit: str) -> str:
    return f"{text} ({unit})" if unit else text


def x_label(spec: ExperimentSpec, plot: PlotSpec) -> str:
    """The swept value, in words and with its unit."""
    key = next((sw.key for sc in spec.scenarios if sc.name in plot.scenarios
                for sw in sc.sweeps if sw.label == plot.x), plot.x)
    parts = key.split(".")
    vm = parts[1] if len(parts) > 2 and parts[0] == "vms" else ""
    known = SWEEP_AXES.get(parts[-1])
    if known is None or (not vm and "{vm}" in known[0]):
        return f"{plot.x} (swept: {key})" if key != plot.x else plot.x
    return _with_unit(known[0].format(vm=vm), known[1])


def y_label(spec: ExperimentSpec, plot: PlotSpec) -> str:
    if plot.kind != "consumed":
        return f"slowdown of VM {spec.critical} relative to '{spec.baseline}' (ratio)"
    column = "mbps_per_cpu" if plot.per_cpu and plot.y == "mbps" else plot.y
    text = METRIC_TEXT.get(column, column).format(vm=spec.critical)
    if plot.relative_to:
        return f"{text}, relative to scenario '{plot.relative_to}' (ratio)"
    return _with_unit(text, METRIC_COLUMNS[plot.y].unit)


def line_label(spec: ExperimentSpec, plot: PlotSpec, bench: str, cpu: str | None = None) -> str:
    """Legend entry: whose value the line is."""
    if plot.y.startswith("interf_"):
        return f"interfering VMs, beside VM {spec.critical} running {bench}"
    if cpu is not None:
        return f"VM {spec.critical} vCPU {cpu}, {bench}"
    return f"VM {spec.critical}, {bench}"


def _event(ev: BwEventSpec) -> str:
    models = ev.models or ((ev.model, ev.bytes_per_event),)
    name = event_name(ev.number)
    return (f"{ev.name}: {name + ' ' if name else ''}(PMU event 0x{ev.number:02x}), "
            + " or ".join(f"{b} B per event ({m} model)" for m, b in models))


def event_meaning(platform: Platform | None, name: str) -> str:
    """What one bandwidth-regulation event is on the platform: per core type
    where the types count different events (the RK3588: L3D_CACHE_ALLOCATE on
    the Cortex-A55, L2D_CACHE_WR on the Cortex-A76), and what QEMU counts
    instead (the fallback event) on a platform it runs."""
    bw = platform.bandwidth if platform is not None else None
    if bw is None:
        return f"{name} declares no memory-bandwidth regulation (no events)."
    if bw.counter == "cycles":
        return (f"On {name} one regulation event is one CPU cycle of guest execution (the cycle counter: "
                "QEMU models no memory events), so MB/s budgets there are notional (1 byte per event).")
    if bw.core_types:
        evs = "; ".join(f"{ct.name}: " + ", ".join(_event(ev) for ev in ct.events) for ct in bw.core_types)
    else:
        evs = "; ".join(_event(ev) for ev in bw.events)
    text = f"On {name} one regulation event is a counted PMU event ({evs})."
    if platform is not None and platform.qemu is not None and bw.fallback is not None:
        fb = event_name(bw.fallback.event)
        text += (f" Under QEMU, which implements none of them, every CPU counts the fallback, {fb + ' ' if fb else ''}"
                 f"(0x{bw.fallback.event:02x}), so one event is one cycle and MB/s budgets are notional.")
    return text
