/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Starting CPUs and powering off, by the methods the platform file names
 * (`cpu_enable:`, `power_off:`; docs/boards/porting.md), each a driver
 * (drivers/cpu_enable/, drivers/power_off/): PSCI over SMC by default, the
 * spin table and the BCM2835 PM watchdog on the Raspberry Pi 4.
 */
#ifndef CORE_BOOT_POWER_H
#define CORE_BOOT_POWER_H

#include "lib/types.h"

/* Starts CPU `index` (1..ncpus-1) at the hypervisor's secondary entry;
 * panics if the firmware refuses. */
void power_cpu_on(u32 index);

/* Powers the machine off (all VMs are off, or a panic). */
__noreturn void power_system_off(void);

#endif
