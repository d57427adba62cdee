# SPDX-License-Identifier: Apache-2.0
"""CPU enable methods: how the hypervisor starts CPUs 1-n, the platform
file's ``cpu_enable:`` (default PSCI; hypervisor/drivers/cpu_enable/
cpu_enable.h). Each ``<name>.py`` here defines ``DRIVER``, a
:class:`bulkhead.drivers.MethodDriver`; the build links the one the
platform names (Makefile ``CPU_ENABLE=``)."""
