# SPDX-License-Identifier: Apache-2.0
"""Where the source tree is, and what its ``hypervisor/drivers/`` offers.

The package is installed editable from the repository (``scripts/setup.sh``),
so the tree is this file's grandparent's parent. The names a platform file may
give a driver (``uart.driver``, ``gic.version``) are read from the driver
directories, the same ones the hypervisor's Makefile selects from: adding a
driver is adding its file (docs/boards/porting.md).
"""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
HYPERVISOR_DIR = REPO_ROOT / "hypervisor"
DRIVERS_DIR = HYPERVISOR_DIR / "drivers"


def drivers(kind: str, drivers_dir: Path = DRIVERS_DIR) -> tuple[str, ...]:
    """The drivers of ``kind``: the ``.c`` files of ``drivers/<kind>/`` but
    ``<kind>.c`` (the code they share) and a driver's own parts
    (``<driver>_<part>.c``, e.g. gicv3_its.c, smmuv3_enc.c), sorted by name."""
    return tuple(sorted(p.stem for p in (drivers_dir / kind).glob("*.c") if p.stem != kind and "_" not in p.stem))


def uart_drivers(drivers_dir: Path = DRIVERS_DIR) -> tuple[str, ...]:
    """``uart.driver`` values: ``drivers/uart/<driver>.c``."""
    return drivers("uart", drivers_dir)


def gic_versions(drivers_dir: Path = DRIVERS_DIR) -> tuple[int, ...]:
    """``gic.version`` values: ``drivers/gic/gicv<version>.c``."""
    return tuple(sorted(int(d[4:]) for d in drivers("gic", drivers_dir)
                        if d.startswith("gicv") and d[4:].isdigit()))


def smmu_drivers(drivers_dir: Path = DRIVERS_DIR) -> tuple[str, ...]:
    """The SMMU drivers: ``drivers/smmu/<driver>.c`` (beside each its own
    ``<driver>_<part>.c``, e.g. the encoders), described by
    bulkhead/drivers/iommu/<driver>.py."""
    return drivers("smmu", drivers_dir)
