/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Memory bandwidth reservation per VM (MemGuard family, VM-centric): each
 * regulated vCPU may cause a budget of memory events per period. A PMU
 * counter reserved for the hypervisor counts the vCPU's events and
 * overflows when the budget is spent (bw_overflow: the vCPU stops running
 * guest code); the EL2 physical timer ends each period (bw_period: counters
 * reloaded, the vCPU runs again). See docs/bandwidth.md.
 */
#ifndef ISOLATION_BW_H
#define ISOLATION_BW_H

#include "lib/types.h"

/* Limits of a period and of a budget (events per period, VM or vCPU);
 * the generated config.c asserts the toolchain's (bulkhead.config.bandwidth
 * MAX_PERIOD_US, MAX_BUDGET_EVENTS) against them. */
#define BW_MAX_PERIOD_US 1000000u
#define BW_MAX_BUDGET    0x7fffffffu

/* Boot CPU, after vm_init_all() and irq_init(): regulator state from the
 * configuration, interrupt handlers, the stall hook, the BH_HC_BW_*
 * hypercalls and the console command (Ctrl-T b). */
void bw_init(void);
/* Every CPU before its vCPU first runs: starts the counter and the period
 * timer when the vCPU is regulated; touches nothing otherwise. */
void bw_cpu_init(void);

/* PMU overflow interrupt: the vCPU on this CPU has spent its budget. */
void bw_overflow(u32 intid);
/* EL2 timer interrupt: the period of the vCPU on this CPU ended. */
void bw_period(u32 intid);

#endif
