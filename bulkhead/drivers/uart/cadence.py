# SPDX-License-Identifier: Apache-2.0
"""Cadence UART of the Zynq UltraScale+: hypervisor/drivers/uart/cadence.c."""

from bulkhead.drivers.uart import UartDriver

DRIVER = UartDriver(kind="uart", name="cadence", compatible=("cadence",), ops="cadence_ops",
                    dt_compatible=("cdns,uart-r1p12", "xlnx,xuartps"), summary="Cadence UART of the Zynq UltraScale+")
