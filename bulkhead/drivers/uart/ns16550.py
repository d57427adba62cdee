# SPDX-License-Identifier: Apache-2.0
"""A generic 16550 of any register spacing: hypervisor/drivers/uart/ns16550.c.
Its registers lie every 1 << ``uart.reg_shift`` bytes (0, 1 or 2; default
0) and are accessed ``uart.reg_io_width`` bytes wide (1 or 4; default 1):
the device tree's reg-shift and reg-io-width."""

from bulkhead.drivers.uart import UartDriver

DRIVER = UartDriver(kind="uart", name="ns16550", compatible=("ns16550",), ops="ns16550_ops",
                    dt_compatible=("ns16550a", "ns16550"), summary="a generic 16550 (reg-shift, reg-io-width)",
                    reg_shift=0, reg_io_width=1, reg_shifts=(0, 1, 2), reg_io_widths=(1, 4))
