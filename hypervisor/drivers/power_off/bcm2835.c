/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The BCM2835/BCM2711 power-management watchdog (PM block, "brcm,bcm2711-pm"):
 * the Raspberry Pi's way to power off without PSCI. Its reset-status
 * register's partition field set to 63 asks the boot firmware to halt after
 * the watchdog reset instead of booting again; QEMU's bcm2835_powermgt
 * model shuts the machine down on that reset. Its data (config.c,
 * bulkhead/drivers/power_off/bcm2835.py): the PM block's base, a u64
 * (mapped as device memory).
 *
 * Register facts: BCM2835 ARM Peripherals (PM_RSTC 0x1c, PM_RSTS 0x20,
 * PM_WDOG 0x24, every write carrying the password 0x5a in bits 31-24);
 * QEMU hw/misc/bcm2835_powermgt.c (shutdown when RSTC's full-reset bit is
 * written while RSTS's partition bits read 0x555, i.e. partition 63).
 */
#include "drivers/power_off/power_off.h"

#define PM_RSTC           0x1c
#define PM_RSTS           0x20
#define PM_WDOG           0x24
#define PM_PASSWORD       0x5a000000u
#define PM_RSTC_WRCFG     0x30u  /* reset configuration field */
#define PM_RSTC_FULL      0x20u  /* full reset when the watchdog expires */
#define PM_RSTS_PARTITION 0x555u /* partition number, bits 0, 2, 4, 6, 8, 10 */
#define PM_RSTS_HALT      0x555u /* partition 63: the firmware halts */
#define PM_WDOG_TICKS     10u    /* ~150 us of the 65.5 kHz watchdog tick */

static u32 bcm2835_pm_read(u64 base, u32 reg)
{
	return *(volatile u32 *)(uintptr_t)(base + reg);
}

static void bcm2835_pm_write(u64 base, u32 reg, u32 value)
{
	*(volatile u32 *)(uintptr_t)(base + reg) = PM_PASSWORD | (value & ~0xff000000u);
}

/* Requests the halt and waits for it with interrupts as they are. */
static __noreturn void bcm2835_pm_halt(const struct power_off_dev *d)
{
	u64 base = *(const u64 *)d->data;
	u32 rsts = bcm2835_pm_read(base, PM_RSTS) & ~PM_RSTS_PARTITION;
	u32 rstc = bcm2835_pm_read(base, PM_RSTC) & ~PM_RSTC_WRCFG;

	bcm2835_pm_write(base, PM_RSTS, rsts | PM_RSTS_HALT);
	bcm2835_pm_write(base, PM_WDOG, PM_WDOG_TICKS);
	__asm__ volatile("dsb sy" ::: "memory");
	bcm2835_pm_write(base, PM_RSTC, rstc | PM_RSTC_FULL);
	for (;;)
		__asm__ volatile("wfi");
}

const struct power_off_ops bcm2835_pm_power_off_ops = { .off = bcm2835_pm_halt };
