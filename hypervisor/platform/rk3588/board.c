/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Rockchip RK3588 (Orange Pi 5 Plus, ROCK 5B; docs/boards/rk3588.md): the
 * GIC-600, the DesignWare UART, the per-core-type bandwidth models and the
 * DSU's L3 way partitioning are all generic, set up from the platform file;
 * the firmware (TF-A) leaves nothing for the board to do.
 */
#include "platform/board.h"

const char *const board_name = "rk3588";

void board_init(void)
{
}
