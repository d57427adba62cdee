# SPDX-License-Identifier: Apache-2.0
"""Modelled figures: the adapter between a timing model and the experiment.

A timing model on top of the cache/DRAM model (docs/model.md) gives each VM
figures that are *modelled*, not measured: its modelled time, its modelled
slowdown, its modelled DRAM bytes per regulation period. The experiment keeps
them in columns named ``modelled_<field>`` (``results.csv``) and the report
shows them in their own section and chart, every one labelled "modelled".

The adapter does not depend on the model's code: a run result (the object
``bulkhead.run.runner.run`` returns) may carry ``modelled``, a mapping
``{vm name: {field: number}}`` (or a callable taking the VM name and
returning ``{field: number}``); :func:`from_result` turns the VM under test's
fields into ``modelled_<field>`` metrics. Fields the report knows:

- ``slowdown``: modelled slowdown relative to the same VM alone (drawn as is);
- ``time_ns``: modelled time of the benchmark (the report divides it by the
  baseline scenario's to draw a modelled slowdown when ``slowdown`` is absent);
- ``dram_bpp``: modelled DRAM bytes per regulation period.

Any other field is listed in the table.

The cache/DRAM model's own timing columns (``bulkhead/run/cachemodel.py`` on
the model branch: ``model_time_ns``, ``model_slowdown``,
``model_dram_bytes_per_period``, ...) are read as the same fields
(:data:`ALIASES`), so the report shows them whichever way they arrive.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

PREFIX = "modelled_"
LABEL = "modelled"
SLOWDOWN = PREFIX + "slowdown"
TIME = PREFIX + "time_ns"
DRAM_BPP = PREFIX + "dram_bpp"
CAVEAT = ("Modelled, not measured: these figures come from the timing model over QEMU's instruction "
          "stream (instructions at a platform CPI plus modelled cache and DRAM stalls), not from hardware.")


# The model branch's column names for the same figures (docs/model.md "Timing model").
ALIASES = {
    "model_time_ns": TIME,
    "model_slowdown": SLOWDOWN,
    "model_dram_bytes_per_period": DRAM_BPP,
    "model_interf_dram_bytes_per_period": PREFIX + "interf_dram_bpp",
    "model_interf_dram_mbps": PREFIX + "interf_dram_mbps",
}


class _HasMetrics(Protocol):
    metrics: dict[str, float]


def is_modelled(column: str) -> bool:
    """A modelled_* column (not the alias names: those are the model's own columns)."""
    return column.startswith(PREFIX)


def columns(records: Sequence[_HasMetrics]) -> list[str]:
    """The modelled_* columns the records carry, in first-seen order."""
    found: list[str] = []
    for r in records:
        for k in r.metrics:
            if is_modelled(k) and k not in found:
                found.append(k)
    return found


def canonical(metrics: Mapping[str, float]) -> dict[str, float]:
    """A run's modelled figures under the modelled_* names, from either
    source (a modelled_* metric wins over its alias)."""
    out = {ALIASES[k]: v for k, v in metrics.items() if k in ALIASES}
    out.update({k: v for k, v in metrics.items() if is_modelled(k)})
    return out


def from_fields(fields: Mapping[str, Any]) -> dict[str, float]:
    """``{field: number}`` as ``{modelled_<field>: float}`` (non-numbers dropped)."""
    out: dict[str, float] = {}
    for key, value in fields.items():
        try:
            number = float(value)
        except (TypeError, ValueError):
            continue
        if math.isfinite(number):
            out[key if is_modelled(key) else PREFIX + key] = number
    return out


def from_result(result: Any, vm: str) -> dict[str, float]:
    """The VM's modelled figures carried by a run result (none if it has none)."""
    source: Mapping[str, Mapping[str, Any]] | Callable[[str], Mapping[str, Any] | None] | None = \
        getattr(result, "modelled", None)
    if source is None:
        return {}
    fields = source(vm) if callable(source) else source.get(vm)
    return from_fields(fields) if fields else {}
