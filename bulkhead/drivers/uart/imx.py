# SPDX-License-Identifier: Apache-2.0
"""NXP i.MX UART (i.MX 8M Plus): hypervisor/drivers/uart/imx.c."""

from bulkhead.drivers.uart import UartDriver

DRIVER = UartDriver(kind="uart", name="imx", compatible=("imx",), ops="imx_ops",
                    dt_compatible=("fsl,imx8mp-uart", "fsl,imx6q-uart", "fsl,imx21-uart"),
                    summary="NXP i.MX UART (i.MX 8M Plus)")
