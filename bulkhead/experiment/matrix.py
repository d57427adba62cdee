# SPDX-License-Identifier: Apache-2.0
"""The run matrix of an experiment spec and the system config of each run
(docs/experiments.md): :func:`expand` turns a spec into runs, and
:func:`generate` makes the system config of one run from the spec's base,
the scenario's overlays, the sweep values, the benchmark and the start/stop
handshake (see :mod:`bulkhead.experiment.spec`).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from bulkhead.experiment import workloads
from bulkhead.experiment.plain import PathError, deep_merge, set_path
from bulkhead.experiment.spec import ExperimentSpec, RunPlan, SyncSpec

SYNC_NAME = "bench-sync"


def selected(spec: ExperimentSpec, benchmarks: Sequence[str] | None = None,
             workloads: Sequence[str] | None = None) -> set[str]:
    """The names of the benchmarks a filter keeps: ``benchmarks`` names a
    benchmark or its bare-metal guest, ``workloads`` a Linux workload's tool
    (cyclictest, ...); both empty: every benchmark."""
    if not benchmarks and not workloads:
        return {b.name for b in spec.benchmarks}
    return {b.name for b in spec.benchmarks
            if (benchmarks and (b.name in benchmarks or (not b.command and b.guest in benchmarks)))
            or (workloads and b.command and (b.guest in workloads or b.name in workloads))}


def expand(spec: ExperimentSpec, repetitions: int | None = None,
           only: Sequence[str] | None = None, benchmarks: Sequence[str] | None = None,
           workloads: Sequence[str] | None = None) -> list[RunPlan]:
    """Every run: scenarios x sweep values x benchmarks x repetitions;
    ``only`` keeps some scenarios, ``benchmarks``/``workloads`` some
    benchmarks (:func:`selected`)."""
    reps = repetitions or spec.repetitions
    keep = selected(spec, benchmarks, workloads)
    plans: list[RunPlan] = []
    for scen in spec.scenarios:
        if only and scen.name not in only:
            continue
        for variant in scen.variants():
            for bench in (b for b in scen.benchmarks if b in keep):
                for rep in range(1, reps + 1):
                    plans.append(RunPlan(len(plans) + 1, scen.name, variant, bench, rep, scen.optional))
    return plans


def generate(spec: ExperimentSpec, plan: RunPlan, platform: str | None = None) -> dict[str, Any]:
    """The system config of one run (a plain mapping, ready for YAML)."""
    config: dict[str, Any] = copy.deepcopy(spec.base)
    scen = spec.scenario(plan.scenario)
    for overlay in scen.overlays:
        config = deep_merge(config, overlay)
    for sweep in scen.sweeps:
        value = dict(plan.variant)[sweep.label]
        set_path(config, sweep.key, value)
    chosen = platform or spec.platform
    if chosen:
        config["platform"] = chosen

    bench = spec.benchmark(plan.benchmark)
    vms = config.get("vms")
    if not isinstance(vms, list):
        raise PathError("the config has no 'vms' list")
    target = next((vm for vm in vms if isinstance(vm, dict) and vm.get("name") == spec.critical), None)
    if target is None:
        raise PathError(f"the scenario removed the VM under test '{spec.critical}'")
    if bench.command:  # a Linux workload: the VM under test runs it at boot (docs/workloads.md)
        if target.get("type") != "linux":
            raise PathError(f"benchmark '{bench.name}' is a Linux workload; the VM under test "
                            f"'{spec.critical}' is not 'type: linux'")
        target["bootargs"] = workloads.with_run(str(target.get("bootargs") or ""), bench.command)
        if why := workloads.net_error(config, target):
            raise PathError(why)
        return config
    target.pop("image", None)
    target["guest"] = bench.guest
    params = dict(target.get("params") or {})
    params.update(bench.params)
    target["params"] = params

    if spec.sync is not None:
        _add_sync(config, spec.critical, spec.sync)
    return config


def _add_sync(config: dict[str, Any], critical: str, sync: SyncSpec) -> None:
    vms = [vm for vm in config["vms"] if isinstance(vm, dict)]
    peers = [vm for vm in vms if vm.get("name") != critical and vm.get("guest") == "interferer"]
    if not peers:
        return
    shmem = config.get("shmem")
    if not isinstance(shmem, list):
        shmem = []
    members = [vm for vm in vms if vm.get("name") == critical] + peers
    for vm in members:
        index = sum(
            1 for region in shmem if isinstance(region, dict) and isinstance(region.get("vms"), list)
            and any(isinstance(m, dict) and m.get("vm") == vm["name"] for m in region["vms"])
        )
        params = dict(vm.get("params") or {})
        params["sync"] = index
        vm["params"] = params
    shmem.append({
        "name": SYNC_NAME,
        "size": sync.size,
        "vms": [{"vm": vm["name"], "ipa": sync.ipa} for vm in members],
    })
    config["shmem"] = shmem


def describe_matrix(spec: ExperimentSpec, plans: Sequence[RunPlan]) -> str:
    """A human-readable summary of the matrix (``--dry-run``)."""
    lines = [f"experiment {spec.name}: {len(plans)} run(s), base {spec.base_display}, "
             f"VM under test '{spec.critical}'"]
    seen: dict[tuple[str, str], int] = {}
    for p in plans:
        seen[(p.label, p.benchmark)] = seen.get((p.label, p.benchmark), 0) + 1
    width = max((len(label) for label, _ in seen), default=8)
    for (label, bench), reps in seen.items():
        lines.append(f"  {label:<{width}}  {bench:<16} x{reps}")
    return "\n".join(lines) + "\n"
