# SPDX-License-Identifier: Apache-2.0
"""Synopsys DesignWare 8250 (RK3588), a 16550 with 32-bit registers every
4 bytes and a busy-detect quirk: hypervisor/drivers/uart/dw8250.c."""

from bulkhead.drivers.uart import UartDriver

DRIVER = UartDriver(kind="uart", name="dw8250", compatible=("dw8250",), ops="dw8250_ops",
                    dt_compatible=("snps,dw-apb-uart",), summary="Synopsys DesignWare 8250 (RK3588)")
