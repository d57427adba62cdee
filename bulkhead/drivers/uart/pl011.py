# SPDX-License-Identifier: Apache-2.0
"""Arm PL011: hypervisor/drivers/uart/pl011.c."""

from bulkhead.drivers.uart import UartDriver

DRIVER = UartDriver(kind="uart", name="pl011", compatible=("pl011",), ops="pl011_ops", dt_compatible=("arm,pl011",),
                    summary="Arm PL011")
