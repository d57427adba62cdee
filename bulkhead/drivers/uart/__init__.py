# SPDX-License-Identifier: Apache-2.0
"""UART drivers (hypervisor/drivers/uart/uart.h): one descriptor per driver,
``<name>.py`` defining ``DRIVER``, a :class:`UartDriver`. ``compatible``
holds the platform file's ``uart.driver`` value; ``ops`` the C symbol of
its operations table, which config.c's ``struct uart_dev`` names with the
register spacing (``uart.reg_shift``, ``uart.reg_io_width``: the
descriptor's defaults, or a value it honours). One driver is linked per
build (Makefile ``UART=``)."""

from __future__ import annotations

from dataclasses import dataclass

from bulkhead import drivers


@dataclass(frozen=True)
class UartDriver(drivers.Driver):
    reg_shift: int = 2  # the default uart.reg_shift: register i at base + (i << reg_shift)
    reg_io_width: int = 4  # the default uart.reg_io_width: bytes per register access
    reg_shifts: tuple[int, ...] = (2,)  # every uart.reg_shift it honours
    reg_io_widths: tuple[int, ...] = (4,)  # every uart.reg_io_width it honours


def of_name(name: str) -> UartDriver:
    """The UART driver ``name`` (hypervisor/drivers/uart/<name>.c)."""
    return drivers.named("uart", name, UartDriver, "UART")
