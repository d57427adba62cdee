/* SPDX-License-Identifier: Apache-2.0 */
/*
 * How the hypervisor powers the machine off: the platform file's
 * `power_off: {method: ...}` (docs/boards/porting.md). One driver per build
 * (Makefile POWER_OFF=<driver>): drivers/power_off/<driver>.c defines its
 * operations, const struct power_off_ops <driver>_power_off_ops, and config.c
 * describes the method (struct power_off_dev: those operations and the
 * driver's own data, which its descriptor bulkhead/drivers/power_off/
 * <driver>.py emits from the platform file). core/boot/power.c is the front
 * end; every .c file here is a method, and a new one is a new file.
 */
#ifndef DRIVERS_POWER_OFF_H
#define DRIVERS_POWER_OFF_H

#include "lib/types.h"

struct power_off_dev;

struct power_off_ops {
	/* Powers the machine off; does not return. */
	void (*off)(const struct power_off_dev *d) __noreturn;
};

/* The method (config.c, from the platform file's power_off:). */
struct power_off_dev {
	const struct power_off_ops *ops;
	const void *data; /* the driver's own (its descriptor says what); NULL: none */
};

#endif
