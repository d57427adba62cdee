/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AMD/Xilinx Versal ACAP (docs/boards/versal.md): the GICv3 (GIC-500), the
 * PL011 console and the Cortex-A72 bandwidth model are generic, set up from
 * the platform file; PSCI is the firmware's (TF-A on the board, QEMU's own
 * on xlnx-versal-virt), so the board has nothing to do.
 */
#include "platform/board.h"

const char *const board_name = "versal";

void board_init(void)
{
}
