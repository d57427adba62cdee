# SPDX-License-Identifier: Apache-2.0
"""A reduced copy of a shipped experiment spec: one benchmark (its
parameters overridden), some scenarios and some values of each sweep, and
the plots that still have their scenarios. The QEMU tests run the shipped
specs this way, and so does ``bench/studies_timing.py`` in timing mode,
where four vCPU threads on a 2-core host cost about 40x the wall time of two
(docs/model.md "Cost")."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any


def _pick(values: list[Any], first: int, picked: Sequence[int] | None) -> list[Any]:
    return [values[i] for i in picked] if picked is not None else values[:first]


def reduce_spec(doc: Mapping[str, Any], bench: str | Sequence[str], params: Mapping[str, Any], scenarios: Sequence[str],
                sweep_values: int = 2, extra: Sequence[Mapping[str, Any]] = (),
                pick: Mapping[str, Sequence[int]] | None = None) -> dict[str, Any]:
    """``doc`` (a spec as parsed YAML, anchors resolved) with only the
    benchmark(s) ``bench`` (``params`` over their own), the scenarios (plus ``extra`` ones) whose
    sweeps keep their first ``sweep_values`` values, or the values at the
    indices ``pick[scenario]`` gives; plots whose scenarios are gone are
    dropped, slowdown plots keep the scenarios that are left."""
    out = {k: copy.deepcopy(v) for k, v in doc.items() if not k.startswith("x-")}
    names = [bench] if isinstance(bench, str) else list(bench)
    out["benchmarks"] = [dict(b, params={**b.get("params", {}), **params}) for b in out["benchmarks"]
                         if b.get("name", b["guest"]) in names]
    if len(out["benchmarks"]) != len(names):
        raise ValueError(f"not every benchmark of {', '.join(names)} is in the spec")
    keep = []
    for scen in [*out["scenarios"], *copy.deepcopy(list(extra))]:
        scen = dict(scen)
        scen.pop("benchmarks", None)
        chosen = (pick or {}).get(scen["name"])
        sweep = scen.get("sweep")
        if isinstance(sweep, dict):
            scen["sweep"] = {k: _pick(v, sweep_values, chosen) for k, v in sweep.items()}
        elif isinstance(sweep, list):
            scen["sweep"] = [dict(s, values=_pick(s["values"], sweep_values, chosen)) for s in sweep]
        keep.append(scen)
    out["scenarios"] = keep
    missing = set(scenarios) - {s["name"] for s in keep}
    if missing:
        raise ValueError(f"no scenario named {', '.join(sorted(missing))}")
    plots = []
    for plot in out.get("plots", []):
        plot = dict(plot)
        if "scenarios" in plot:
            plot["scenarios"] = [s for s in plot["scenarios"] if s in scenarios]
        if plot.get("scenario", scenarios[0]) in scenarios and plot.get("relative_to", scenarios[0]) in scenarios:
            plots.append(plot)
    out["plots"] = plots
    return out
