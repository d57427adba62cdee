/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Xilinx ZCU102/ZCU104 (Zynq UltraScale+ MPSoC): everything comes from the
 * platform description (GIC-400, Cadence UART). The CoreLink QoS-400
 * regulators, secure after Xilinx's boot, are reached through the firmware
 * (pm_mmio.c); the SMMU comes with a later issue.
 */
#include "platform/board.h"
#include "isolation/qos400.h"
#include "platform/zynqmp/pm_mmio.h"

const char *const board_name = "zynqmp";

void board_init(void)
{
	qos400_set_fw(&zynqmp_pm_mmio);
}
