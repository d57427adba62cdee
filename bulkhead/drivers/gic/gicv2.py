# SPDX-License-Identifier: Apache-2.0
"""Arm GICv2 (GIC-400), with its virtual CPU interface: hypervisor/drivers/gic/gicv2.c."""

from bulkhead.drivers.gic import GicDriver

DRIVER = GicDriver(kind="gic", name="gicv2", compatible=("gicv2",), ops="gicv2_ops", arch=2,
                   # qcom,msm-qgic2: Qualcomm's GICv2, which Linux's GIC driver also takes
                   dt_compatible=("arm,gic-400", "arm,cortex-a15-gic", "arm,cortex-a9-gic", "arm,cortex-a7-gic",
                                  "qcom,msm-qgic2"),
                   summary="Arm GICv2 (GIC-400), with its virtual CPU interface")
