# SPDX-License-Identifier: Apache-2.0
"""The registry of mechanisms (:mod:`bulkhead.config.mechanism`), found, not
listed: every module or package of ``bulkhead/config/`` that assigns
``MECHANISM`` at its top level (read with ast, so that nothing else is
imported) is imported, and its descriptor taken. Every stage runs their
hooks in their ``rank`` order (errors are sorted by position; warnings, C
tables and struct members come in this order): page coloring, shared I/O,
PCI, memory bandwidth, QoS-400, DMA isolation, interrupt delivery, DSU L3
ways. Adding a mechanism is adding its module (and its C files, which its
descriptor names: :func:`sources`)."""

from __future__ import annotations

import ast
import importlib
from functools import cache
from pathlib import Path

from bulkhead.base import tree
from bulkhead.config.mechanism import Mechanism

CONFIG_DIR = Path(__file__).resolve().parent


def declared(config: Path = CONFIG_DIR) -> list[str]:
    """Modules (and packages) of the config package ``config`` that assign
    ``MECHANISM`` at top level, sorted."""
    out = []
    for path in sorted([*config.glob("*.py"), *config.glob("*/__init__.py")]):
        for node in ast.parse(path.read_text(), str(path)).body:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
                if isinstance(node, ast.AnnAssign) else []
            if any(isinstance(t, ast.Name) and t.id == "MECHANISM" for t in targets):
                out.append(path.parent.name if path.name == "__init__.py" else path.stem)
    return sorted(out)


@cache
def registered() -> tuple[Mechanism, ...]:
    """Every mechanism, in rank order (TypeError: a ``MECHANISM`` that is not
    its module's :class:`Mechanism`)."""
    found = []
    for name in declared():
        m = getattr(importlib.import_module(f"{__package__}.{name}"), "MECHANISM", None)
        if not isinstance(m, Mechanism) or m.name != name:
            raise TypeError(f"bulkhead/config/{name}: MECHANISM must be the Mechanism '{name}'")
        found.append(m)
    return tuple(sorted(found, key=lambda m: (m.rank, m.name)))


def features() -> tuple[str, ...]:
    """Every feature some mechanism decides, in rank order (features.h's and
    features.mk's order)."""
    return tuple(f for m in registered() for f in m.features)


def sources(feature: str, hypervisor: Path = tree.HYPERVISOR_DIR) -> list[str]:
    """The C files of ``feature`` (its mechanism's ``features`` globs, under
    ``hypervisor``), sorted (ValueError: not a feature; a pattern that
    matches no file)."""
    found = [m.features[feature] for m in registered() if feature in m.features]
    if not found:
        raise ValueError(f"{feature}: no mechanism decides it (features: {' '.join(features())})")
    out = set()
    for pattern in found[0]:
        matched = [p.relative_to(hypervisor).as_posix() for p in hypervisor.glob(pattern) if p.is_file()]
        if not matched:
            raise ValueError(f"{feature}: {pattern} names no file under {hypervisor}")
        out.update(matched)
    return sorted(out)
