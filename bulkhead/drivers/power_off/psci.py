# SPDX-License-Identifier: Apache-2.0
"""PSCI SYSTEM_OFF over SMC, the default: hypervisor/drivers/power_off/psci.c."""

from bulkhead.drivers import MethodDriver

DRIVER = MethodDriver(kind="power_off", name="psci", compatible=("psci",), ops="psci_power_off_ops",
                      summary="PSCI SYSTEM_OFF over SMC")
