/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Xilinx ZCU102/ZCU104 (Zynq UltraScale+ MPSoC): everything comes from the
 * platform description (GIC-400, Cadence UART). The CoreLink QoS-400
 * regulators and the SMMU are set up here by later issues.
 */
#include "platform/board.h"

const char *const board_name = "zynqmp";

void board_init(void)
{
}
