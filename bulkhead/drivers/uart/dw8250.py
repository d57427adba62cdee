# SPDX-License-Identifier: Apache-2.0
"""Synopsys DesignWare 8250 (RK3588): hypervisor/drivers/uart/dw8250.c."""

from bulkhead.drivers import Driver

DRIVER = Driver(kind="uart", name="dw8250", compatible=("dw8250",),
                dt_compatible=("snps,dw-apb-uart",), summary="Synopsys DesignWare 8250 (RK3588)")
