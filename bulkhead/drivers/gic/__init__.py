# SPDX-License-Identifier: Apache-2.0
"""GIC drivers (hypervisor/drivers/gic/gic.h): one descriptor per driver,
``<name>.py`` defining ``DRIVER``, a :class:`GicDriver`. ``compatible``
holds the platform file's ``gic.driver`` value (default ``gicv<version>``);
``arch`` is the GIC architecture it drives, which picks the VMs' virtual
GIC and the hot-path accessors (Makefile ``GIC=``, drivers/gic/gic_hot.h);
``ops`` the C symbol of its cold operations' table, which config.c names.
One driver is linked per build (Makefile ``GIC_DRIVER=``)."""

from __future__ import annotations

from dataclasses import dataclass

from bulkhead import drivers


@dataclass(frozen=True)
class GicDriver(drivers.Driver):
    arch: int = 3  # the GIC architecture version: 2 (GIC-400) or 3


def all_drivers() -> tuple[GicDriver, ...]:
    """Every GIC driver of the tree."""
    return tuple(d for d in drivers.of_kind("gic") if isinstance(d, GicDriver))


def of_name(name: str) -> GicDriver:
    """The GIC driver ``name`` (hypervisor/drivers/gic/<name>.c)."""
    return drivers.named("gic", name, GicDriver, "GIC")


def versions() -> tuple[int, ...]:
    """The architecture versions some driver drives (``gic.version``)."""
    return tuple(sorted({d.arch for d in all_drivers()}))
