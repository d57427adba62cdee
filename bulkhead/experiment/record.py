# SPDX-License-Identifier: Apache-2.0
"""What one run of an experiment produced: its status, metrics and result
lines (:class:`RunRecord`), and the environment of the whole experiment.
Written by :mod:`bulkhead.experiment.execute`, read back from ``results.csv`` and
rendered by :mod:`bulkhead.experiment.report`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bulkhead.experiment.spec import RunPlan

# Run status values. Only "ok" carries metrics.
OK = "ok"
FAIL = "fail"  # the guest reported FAIL, printed no PASS, or the run was not clean
TIMEOUT = "timeout"
INVALID = "invalid"  # the generated config does not pass `bulkhead check`
UNSUPPORTED = "unsupported"  # same, in a scenario marked optional
BUILD_ERROR = "build-error"
STATUSES = (OK, FAIL, TIMEOUT, INVALID, UNSUPPORTED, BUILD_ERROR)


@dataclass
class RunRecord:
    plan: RunPlan
    guest: str
    metric: str
    unit: str
    status: str
    error: str = ""
    metrics: dict[str, float] = field(default_factory=dict)
    lines: list[tuple[str, dict[str, str]]] = field(default_factory=list)  # (vm, result fields)
    config: str = ""
    config_hash: str = ""
    platform: str = ""
    wall_s: float = 0.0
    place: str = ""  # the labgrid place it ran on (docs/farm.md); "" for a local run
    flags: list[str] = field(default_factory=list)  # why its value is an artefact (validity.py); not drawn
    artefacts: dict[str, Any] = field(default_factory=dict)  # what it booted, hashed (bundle.run_artefacts)
    icount: int | None = None  # its -icount shift; None: none (host time, or the timing mode)

    @property
    def value(self) -> float | None:
        return self.metrics.get(self.metric)


@dataclass(frozen=True)
class Environment:
    bulkhead_version: str
    git_rev: str
    qemu_version: str
    host: str
