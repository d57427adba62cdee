# SPDX-License-Identifier: Apache-2.0
"""The BCM2835/BCM2711 PM watchdog (the Raspberry Pi 4's):
hypervisor/drivers/power_off/bcm2835.c. ``base``: the PM block, a page
inside ``mmio`` (the EL2 device window); config.c gives the driver it."""

from __future__ import annotations

from dataclasses import dataclass

from bulkhead.drivers import Board, Declare, MethodDriver, Param, Value


@dataclass(frozen=True)
class Bcm2835Pm(MethodDriver):
    def check(self, key: str, value: Value, board: Board) -> tuple[str, str] | None:
        lo, hi = board.mmio
        if isinstance(value, int) and not (lo <= value and value + 0x1000 <= hi):
            return "", f"0x{value:x} is outside 'mmio' (the EL2 device window)"
        return None

    def data(self, args: dict[str, Value], declare: Declare) -> str | None:
        declare(f"static const u64 power_off_base = 0x{args['base']:x};")
        return "&power_off_base"


DRIVER = Bcm2835Pm(kind="power_off", name="bcm2835", compatible=("bcm2835-pm",), ops="bcm2835_pm_power_off_ops",
                   summary="the BCM2835/BCM2711 PM watchdog's halt",
                   params=(Param("base", "the PM block"),))
