# SPDX-License-Identifier: Apache-2.0
"""PSCI CPU_ON over SMC, the default: hypervisor/drivers/cpu_enable/psci.c."""

from bulkhead.drivers import MethodDriver

DRIVER = MethodDriver(kind="cpu_enable", name="psci", compatible=("psci",), ops="psci_cpu_enable_ops",
                      summary="PSCI CPU_ON over SMC")
