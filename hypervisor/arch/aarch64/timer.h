/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The EL2 physical timer (CNTHP_*_EL2): the hypervisor's own timer, never
 * visible to guests. Programmed with absolute compare values on the
 * physical counter, so a periodic user that adds its period to the last
 * deadline never drifts, however late its interrupt is handled.
 */
#ifndef ARCH_TIMER_H
#define ARCH_TIMER_H

#include "arch/aarch64/sysregs.h"
#include "lib/types.h"

/* The generic timers' PPIs */
#define IRQ_PPI_HYPTIMER 26 /* EL2 physical timer */
#define IRQ_PPI_VTIMER   27 /* virtual timer: always the running guest's */
#define IRQ_PPI_PTIMER   30 /* EL1 physical timer: also the running guest's */

#define CNTHP_CTL_ENABLE BIT(0)
#define CNTHP_CTL_IMASK  BIT(1)

/* Physical counter (CNTPCT_EL0) and its frequency (CNTFRQ_EL0, Hz). */
static inline u64 timer_now(void)
{
	return arch_counter();
}

/* The same, without the barrier before the read: only right after an
 * exception entry, which is a context synchronisation event, so the read is
 * not performed before the exception was taken (an interrupt of the EL2
 * timer: at or after its deadline). */
static inline u64 timer_now_at_entry(void)
{
	return sysreg_read(cntpct_el0);
}

u64 timer_freq(void);

/* Fires the EL2 timer interrupt (a level PPI, see the platform) once
 * CNTPCT >= deadline; the line stays asserted until the timer is re-armed
 * later or stopped. */
static inline void timer_hyp_arm(u64 deadline)
{
	sysreg_write(cnthp_cval_el2, deadline);
	sysreg_write(cnthp_ctl_el2, CNTHP_CTL_ENABLE);
	isb();
}

/* Moves the deadline of the armed timer (it fired: the hot path). */
static inline void timer_hyp_rearm(u64 deadline)
{
	sysreg_write(cnthp_cval_el2, deadline);
	isb();
}

void timer_hyp_stop(void);
/* The current compare value. */
u64 timer_hyp_deadline(void);

/* ticks <-> nanoseconds at timer_freq() (no overflow below ~2^64 / 10^9 s). */
u64 timer_ticks_to_ns(u64 ticks);
u64 timer_ns_to_ticks(u64 ns);

#endif
