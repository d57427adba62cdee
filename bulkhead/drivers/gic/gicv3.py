# SPDX-License-Identifier: Apache-2.0
"""Arm GICv3 (GIC-500/600), system-register CPU interface: hypervisor/drivers/gic/gicv3.c."""

from bulkhead.drivers.gic import GicDriver

DRIVER = GicDriver(kind="gic", name="gicv3", compatible=("gicv3",), ops="gicv3_ops", arch=3, dt_compatible=("arm,gic-v3",),
                   summary="Arm GICv3 (GIC-500/600), system-register CPU interface")
