# SPDX-License-Identifier: Apache-2.0
"""IOMMU drivers (hypervisor/drivers/iommu.h): one descriptor per driver,
``<name>.py`` defining ``DRIVER``, an :class:`IommuDriver`. Its
``compatible`` values are the platform file's ``smmus[].type``; the tables it
needs (stream tables, queues, stream-match slots, context banks) are computed
here and emitted into config.c (bulkhead/generate/gen_c.py), so the C driver
recomputes nothing."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bulkhead import drivers

Fields = list[tuple[str, str]]  # C designated initializers: (field, value)
Declare = Callable[[str], None]  # adds one line of C before the unit table


@dataclass(frozen=True)
class Stream:
    """One stream of a unit, in config.c's stream order."""

    sid: int
    vm: int  # the owning VM's index


@dataclass(frozen=True)
class IommuDriver(drivers.Driver):
    """An IOMMU driver: its limits and the tables it needs."""

    window: int = 0x10000  # the least register window (smmus[].size)
    sid_bits: int = 32  # stream ID width the hardware takes
    pcie: bool = False  # modelled with the PCIe root complex behind it (smmus[].pcie)
    max_streams: int | None = None  # streams one unit can match (None: any number)

    def __post_init__(self) -> None:
        if not self.ops or not self.feature:
            raise TypeError(f"IOMMU driver '{self.name}': name its C operations table (ops) and feature")

    def unit_fields(self, k: int, streams: Sequence[Stream], declare: Declare) -> Fields:
        """Unit k's driver fields of struct iommu_unit; ``declare`` adds the
        static memory they point to (none here)."""
        return []

    def stream_fields(self, streams: Sequence[Stream]) -> list[Fields]:
        """Each stream's driver fields of struct iommu_stream (none here)."""
        return [[] for _ in streams]


def all_drivers() -> tuple[IommuDriver, ...]:
    """Every IOMMU driver of the tree."""
    return tuple(d for d in drivers.of_kind("iommu") if isinstance(d, IommuDriver))


def of_type(smmu_type: str) -> IommuDriver:
    """The driver of ``smmus[].type`` (checked by the schema)."""
    d = drivers.compatible("iommu", smmu_type)
    if not isinstance(d, IommuDriver):
        raise KeyError(f"no IOMMU driver for SMMU type '{smmu_type}'")
    return d


def types() -> tuple[str, ...]:
    """The ``smmus[].type`` values some driver accepts."""
    return drivers.values("iommu")


def ranks(keys: Sequence[int]) -> list[int]:
    """Each key's rank among the distinct keys, in first-seen order."""
    first: dict[int, int] = {}
    return [first.setdefault(key, len(first)) for key in keys]
