# SPDX-License-Identifier: Apache-2.0
"""Power-off methods (the platform file's ``power_off:``, PSCI unless it says
otherwise): one descriptor per C file of hypervisor/drivers/power_off/, its
``DRIVER`` a :class:`bulkhead.drivers.MethodDriver` naming the driver's
``struct power_off_ops``; Makefile ``POWER_OFF=`` builds one."""
