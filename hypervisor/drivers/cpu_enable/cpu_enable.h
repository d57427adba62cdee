/* SPDX-License-Identifier: Apache-2.0 */
/*
 * How the hypervisor starts the other CPUs: the platform file's
 * `cpu_enable: {method: ...}` (docs/boards/porting.md). One driver per build
 * (Makefile CPU_ENABLE=<driver>): drivers/cpu_enable/<driver>.c defines its
 * operations, const struct cpu_enable_ops <driver>_cpu_enable_ops, and
 * config.c describes the method (struct cpu_enable_dev: those operations and
 * the driver's own data, which its descriptor bulkhead/drivers/cpu_enable/
 * <driver>.py emits from the platform file). core/boot/power.c is the front
 * end; every .c file here is a method, and a new one is a new file.
 */
#ifndef DRIVERS_CPU_ENABLE_H
#define DRIVERS_CPU_ENABLE_H

#include "lib/types.h"

struct cpu_enable_dev;

struct cpu_enable_ops {
	/* Starts CPU `index` (physical MPIDR `mpidr`) at the hypervisor's
	 * secondary entry; panics when it cannot. */
	void (*cpu_on)(const struct cpu_enable_dev *d, u32 index, u64 mpidr);
};

/* The method (config.c, from the platform file's cpu_enable:). */
struct cpu_enable_dev {
	const struct cpu_enable_ops *ops;
	const void *data; /* the driver's own (its descriptor says what); NULL: none */
};

#endif
