/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The BCM2835/BCM2711 power-management watchdog (PM block, "brcm,bcm2711-pm"):
 * the Raspberry Pi's way to power off without PSCI. Its reset-status
 * register's partition field set to 63 asks the boot firmware to halt after
 * the watchdog reset instead of booting again; QEMU's bcm2835_powermgt
 * model shuts the machine down on that reset.
 */
#ifndef DRIVERS_POWER_BCM2835_PM_H
#define DRIVERS_POWER_BCM2835_PM_H

#include "lib/types.h"

/* Requests the halt through the PM block at `base` (mapped as device memory)
 * and waits for it with interrupts as they are. */
__noreturn void bcm2835_pm_halt(u64 base);

#endif
