/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NXP i.MX 8M Plus (EVK; docs/boards/imx8mp.md): the GIC-500, the i.MX UART
 * and the Cortex-A53 bandwidth model are generic, set up from the platform
 * file; CPUs start and the system powers off through TF-A's PSCI (QEMU's on
 * the imx8mp-evk machine): nothing is left for the board to do.
 */
#include "platform/board.h"

const char *const board_name = "imx8mp";

void board_init(void)
{
}
