# SPDX-License-Identifier: Apache-2.0
"""Drivers as registered units (docs/boards/porting.md "Drivers").

Every driver of the hypervisor is one C file, ``hypervisor/drivers/<dir>/<name>.c``,
and one descriptor here, ``bulkhead/drivers/<kind>/<name>.py``, whose ``DRIVER``
says what the toolchain needs to know: the platform-file values that select
it and the device-tree compatibles it drives, its C file, the feature the
build names it by and the C symbol of its operations table. :func:`of_kind` finds the descriptors by import (pkgutil):
there is no central list, so adding a driver is adding its two files.
The boot-time methods (``cpu_enable``, ``power_off``) are method drivers (:class:`MethodDriver`):
they also say their platform-file keys, check their values and emit the
data config.c gives them.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from types import ModuleType
from typing import TypeVar

KINDS = ("uart", "gic", "iommu", "cpu_enable", "power_off")
Declare = Callable[[str], None]  # adds one line of C before the table that names the driver


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


Value = int | tuple[int, ...]  # a method key's value: an address, or a list of them


@dataclass(frozen=True)
class Param:
    """A platform-file key of a method, beside ``method``: an address, or a list of them."""

    key: str
    what: str  # what it is, in messages: "each CPU's release address"
    list_of: str | None = None  # a list: what the list is ("a list of release addresses")


@dataclass(frozen=True)
class Board:
    """What a method's check sees of the platform."""

    ncpus: int
    ram: tuple[tuple[int, int], ...]  # each RAM bank's (base, end)
    mmio: tuple[int, int]  # the EL2 device window's (base, end)


@dataclass(frozen=True)
class MethodDriver(Driver):
    """A boot-time method (``cpu_enable:``, ``power_off:``): its operations
    table is ``struct <kind>_ops``; config.c's ``struct <kind>_dev`` names it
    and the driver's data (:meth:`data`)."""

    params: tuple[Param, ...] = ()  # its keys, each required with this method

    def check(self, key: str, value: Value, board: Board) -> tuple[str, str] | None:
        """None, or the first mistake in ``key``'s value: (the path's suffix,
        e.g. "[3]", and the message)."""
        return None

    def data(self, args: dict[str, Value], declare: Declare) -> str | None:
        """The C expression of ``.data`` after ``declare``-ing what it points to
        (None: no data)."""
        return None


def methods(kind: str) -> tuple[MethodDriver, ...]:
    """The method drivers of ``kind`` (TypeError: a descriptor of another class)."""
    found = of_kind(kind)
    for d in found:
        if not isinstance(d, MethodDriver) or not d.ops:
            raise TypeError(f"bulkhead/drivers/{kind}/{d.name}.py: DRIVER must be a MethodDriver naming its ops")
    return tuple(d for d in found if isinstance(d, MethodDriver))


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
