/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Memory bandwidth reservation per VM (MemGuard family, VM-centric): each
 * regulated vCPU may cause a budget of memory events per period. A PMU
 * counter reserved for the hypervisor counts the vCPU's events and
 * overflows when the budget is spent (bw_overflow: the vCPU stops running
 * guest code); the EL2 physical timer ends each period (bw_period: counters
 * reloaded, the vCPU runs again). See docs/bandwidth.md.
 *
 * Three files: the engine (bw.c), its hypercalls and console command
 * (bw_hc.c), its set-up (bw_init.c: the two functions below); they share
 * isolation/bw_engine.h.
 */
#ifndef ISOLATION_BW_H
#define ISOLATION_BW_H

#include "core/config/config.h"
#include "isolation/bw_budget.h" /* BW_MAX_PERIOD_US, BW_MAX_BUDGET */
#include "lib/features.h"
#include "lib/log.h"
#include "lib/types.h"

#if IS_ENABLED(BW)
/* Boot CPU, after vm_init_all() and irq_init(): regulator state from the
 * configuration, interrupt handlers, the stall hook, the BH_HC_BW_*
 * hypercalls and the console command (Ctrl-T b). */
void bw_init(void);
/* Every CPU before its vCPU first runs: starts the counter and the period
 * timer when the vCPU is regulated; touches nothing otherwise. */
void bw_cpu_init(void);
#else
/* Built without the regulator (Makefile BW=0: no VM of the configuration is
 * regulated): BH_HC_BW_* are unknown calls, Ctrl-T b an unknown command. */
static inline void bw_init(void)
{
	for (u32 i = 0; i < cfg_system.nvms; i++)
		if (cfg_system.vms[i].bw)
			panic("vm %s is regulated, and the hypervisor was built without the "
			      "regulator "
			      "(BW=0)",
			      cfg_system.vms[i].name);
}

static inline void bw_cpu_init(void)
{
}
#endif

#endif
