# SPDX-License-Identifier: Apache-2.0
"""UART drivers (hypervisor/drivers/uart/uart.h): one descriptor per driver,
``<name>.py`` defining ``DRIVER``; ``compatible`` holds the platform file's
``uart.driver`` value. One driver is linked per build (Makefile ``UART=``):
its C file implements uart.h, the kind's operations."""
