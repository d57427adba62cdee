# SPDX-License-Identifier: Apache-2.0
"""Drivers as registered units (docs/boards/porting.md "Drivers").

Every driver of the hypervisor is one C file, ``hypervisor/drivers/<dir>/<name>.c``,
and one descriptor here, ``bulkhead/drivers/<kind>/<name>.py``, whose ``DRIVER``
says what the toolchain needs to know: the platform-file values that select
it and the device-tree compatibles it drives, its C file, the feature the
build names it by and the C symbol of its operations table. :func:`of_kind` finds the descriptors by import (pkgutil):
there is no central list, so adding a driver is adding its two files.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from functools import cache
from types import ModuleType
from typing import TypeVar

KINDS = ("uart", "gic", "iommu")


@dataclass(frozen=True)
class Driver:
    """What the toolchain knows of one driver."""

    kind: str  # KINDS
    name: str  # its C file's stem: hypervisor/drivers/<source_dir>/<name>.c
    compatible: tuple[str, ...]  # the platform-file values that select it
    summary: str  # one line: what hardware it drives
    feature: str | None = None  # features.h name when a build may leave it out (SMMUV3)
    ops: str | None = None  # the C symbol of its operations table, which config.c names
    dt_compatible: tuple[str, ...] = ()  # device-tree compatibles it drives (platform import)

    @property
    def source_dir(self) -> str:
        """Its directory under hypervisor/drivers/ (the IOMMUs': smmu)."""
        return "smmu" if self.kind == "iommu" else self.kind

    @property
    def source(self) -> str:
        """Its C file, relative to hypervisor/."""
        return f"drivers/{self.source_dir}/{self.name}.c"


def _package(kind: str) -> ModuleType:
    if kind not in KINDS:
        raise ValueError(f"unknown driver kind '{kind}' (kinds: {', '.join(KINDS)})")
    return importlib.import_module(f"{__name__}.{kind}")


@cache
def of_kind(kind: str) -> tuple[Driver, ...]:
    """The descriptors of ``kind``: every module of bulkhead/drivers/<kind>/
    defining ``DRIVER``, sorted by name."""
    pkg = _package(kind)
    found = []
    for info in pkgutil.iter_modules(pkg.__path__):
        driver = getattr(importlib.import_module(f"{pkg.__name__}.{info.name}"), "DRIVER", None)
        if not isinstance(driver, Driver) or driver.kind != kind or driver.name != info.name:
            raise TypeError(f"bulkhead/drivers/{kind}/{info.name}.py: DRIVER must be the {kind} "
                            f"driver '{info.name}'")
        found.append(driver)
    return tuple(sorted(found, key=lambda d: d.name))


D = TypeVar("D", bound=Driver)


def named(kind: str, name: str, cls: type[D], what: str) -> D:
    """The driver ``name`` of ``kind``, a ``cls`` naming the operations table
    config.c refers to (ValueError: no such driver; TypeError: a descriptor
    of another class or without ``ops``). ``what`` names the kind in errors."""
    found = next((d for d in of_kind(kind) if d.name == name), None)
    if found is None:
        raise ValueError(f"no {what} driver '{name}'")
    if not isinstance(found, cls) or not found.ops:
        raise TypeError(f"bulkhead/drivers/{kind}/{name}.py: DRIVER must be a {cls.__name__} naming its ops")
    return found


def compatible(kind: str, value: str) -> Driver | None:
    """The driver of ``kind`` a platform-file value selects (None: none)."""
    return next((d for d in of_kind(kind) if value in d.compatible), None)


def values(kind: str) -> tuple[str, ...]:
    """Every platform-file value some driver of ``kind`` accepts, sorted."""
    return tuple(sorted(v for d in of_kind(kind) for v in d.compatible))
