/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Raspberry Pi 4 Model B (BCM2711): everything comes from the platform
 * description (GIC-400, PL011 UART0). The spin table that starts the other
 * CPUs and the PM watchdog that powers off are the platform file's
 * `cpu_enable:` and `power_off:` (drivers/cpu_enable/spintable.c,
 * drivers/power_off/bcm2835.c).
 */
#include "platform/board.h"

const char *const board_name = "bcm2711";

void board_init(void)
{
}
